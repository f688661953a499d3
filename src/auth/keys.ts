import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { apiKeys, apiKeyUsage, type ApiKeyRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { normalizeAllowedDomain } from './domains.ts';
import { isoOrNull } from '../lib/time.ts';
import { createKeyUsage } from './key-usage.ts';
import { createVerifiedCache } from './verified-cache.ts';

export const SCOPES = ['probe:scan', 'admin', 'products:read', 'dashboard:read', 'metrics:read'] as const;
export type Scope = (typeof SCOPES)[number];

export const KEY_PREFIX = 'sk_live_';
/** 32 random bytes -> 43 base64url characters after the prefix. */
const KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{43}$/;

export interface ApiKey {
  id: string;
  name: string;
  keyPrefix: string;
  scopes: string[];
  allowedDomains: string[];
  storeId: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** A key as the admin API and `svc keys list` show it: with when it was last used (to about a minute), null if never. */
export interface ListedApiKey extends ApiKey {
  lastUsedAt: string | null;
}

export interface NewApiKey {
  name?: string | undefined;
  scopes: string[];
  allowedDomains?: string[] | undefined;
  storeId?: string | null | undefined;
}


export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.keyPrefix,
    scopes: row.scopes,
    allowedDomains: row.allowedDomains,
    storeId: row.storeId,
    createdAt: isoOrNull(row.createdAt)!,
    revokedAt: isoOrNull(row.revokedAt),
  };
}

/** Admin implies every other scope. */
export function keyHasScope(key: Pick<ApiKey, 'scopes'>, scope: Scope): boolean {
  return key.scopes.includes('admin') || key.scopes.includes(scope);
}

export function looksLikeApiKey(raw: string): boolean {
  return KEY_PATTERN.test(raw);
}

/** An api_keys row as SQLite returns it (JSON columns still text). */
interface RawKeyRow {
  id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  scopes: string;
  allowed_domains: string;
  store_id: string | null;
  created_at: number;
  revoked_at: number | null;
}

/** Verified keys kept in memory (src/auth/verified-cache.ts). */
const VERIFIED_KEYS = 10_000;

/**
 * `storeExists` checks a `storeId` binding at creation (stores are another capability's records);
 * without it, bindings are taken as given.
 */
export function createKeyStore(db: Db, clock: Clock, storeExists?: (id: string) => boolean) {
  // A raw prepared statement: verify() runs on every signed telemetry request, where drizzle's
  // query path measured about three times slower than the lookup itself.
  const byHash = db.$client.query<RawKeyRow, [string]>('SELECT * FROM api_keys WHERE key_hash = ?');
  const byId = db.$client.query<RawKeyRow, [string]>('SELECT * FROM api_keys WHERE id = ?');
  // Verification runs on every authenticated request: a verified key is reused until api_keys changes.
  const verified = createVerifiedCache<ApiKey>(db.$client, 'api_keys', VERIFIED_KEYS);
  // Every key that verifies (or acts for a console session) is in use: noted at most once a minute per key.
  const usage = createKeyUsage(db.$client, clock, VERIFIED_KEYS);
  const lastUse = db.select({ at: apiKeyUsage.lastUsedAt }).from(apiKeyUsage).where(eq(apiKeyUsage.keyId, sql.placeholder('id'))).prepare();
  const listed = (row: ApiKeyRow, lastUsedAt: number | null): ListedApiKey => ({ ...toApiKey(row), lastUsedAt: isoOrNull(lastUsedAt) });
  const fromRaw = (row: RawKeyRow): ApiKey =>
    toApiKey({
      id: row.id,
      name: row.name,
      keyHash: row.key_hash,
      keyPrefix: row.key_prefix,
      scopes: JSON.parse(row.scopes) as string[],
      allowedDomains: JSON.parse(row.allowed_domains) as string[],
      storeId: row.store_id,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
    });

  return {
    /** Creates a key; the raw key is returned only here and never stored. */
    create(input: NewApiKey): { key: string; record: ListedApiKey } {
      const scopes = [...new Set(input.scopes)];
      const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (scopes.length === 0 || unknown.length > 0) {
        throw new ApiError(400, 'invalid_scopes', `scopes must be one or more of ${SCOPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
      }
      const allowedDomains = (input.allowedDomains ?? []).map((entry) => {
        const domain = normalizeAllowedDomain(entry);
        if (!domain) throw new ApiError(400, 'invalid_domain', `allowedDomains entry ${JSON.stringify(entry)} is not a host name or *.host pattern`);
        return domain;
      });
      if (input.storeId && storeExists && !storeExists(input.storeId)) {
        throw new ApiError(400, 'unknown_store', `storeId ${JSON.stringify(input.storeId)} names no store`);
      }
      // products:read exists for the FAQ widget, which answers only for a key bound to a store: an
      // unbound one would be refused on every page (key_not_bound, seen by the browser as a CORS error).
      if (scopes.includes('products:read') && !scopes.includes('admin') && !input.storeId) {
        throw new ApiError(400, 'store_required', 'a products:read key is for the FAQ widget, which serves one store: give its storeId (svc keys create --store STORE_ID); admin keys need none');
      }
      const key = KEY_PREFIX + randomSecret(32);
      const row = db
        .insert(apiKeys)
        .values({
          id: newId(),
          name: input.name ?? '',
          keyHash: sha256Hex(key),
          keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
          scopes,
          allowedDomains: [...new Set(allowedDomains)],
          storeId: input.storeId ?? null,
          createdAt: clock.now(),
        })
        .returning()
        .get();
      return { key, record: listed(row, null) };
    },

    /** Revokes a key at once; revoking twice keeps the first revocation time. */
    revoke(id: string): ListedApiKey | null {
      const existing = db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
      if (!existing) return null;
      const row = existing.revokedAt !== null ? existing : db.update(apiKeys).set({ revokedAt: clock.now() }).where(eq(apiKeys.id, id)).returning().get()!;
      return listed(row, lastUse.get({ id })?.at ?? null);
    },

    /** Every key, revoked ones included, oldest first (by creation). */
    list(): ListedApiKey[] {
      return db
        .select({ key: apiKeys, lastUsedAt: apiKeyUsage.lastUsedAt })
        .from(apiKeys)
        .leftJoin(apiKeyUsage, eq(apiKeyUsage.keyId, apiKeys.id))
        .orderBy(apiKeys.createdAt, apiKeys.id)
        .all()
        .map(({ key, lastUsedAt }) => listed(key, lastUsedAt));
    },

    /**
     * The active key for a raw `sk_live_` string, or null (unknown, malformed or revoked).
     * Found by its SHA-256, in memory while the database is unchanged, else in the database, whose
     * stored hash is then compared in constant time.
     */
    verify(raw: string): ApiKey | null {
      if (!looksLikeApiKey(raw)) return null;
      const hash = sha256Hex(raw);
      const key = verified.get(hash, () => {
        const row = byHash.get(hash);
        if (!row || !safeEqual(row.key_hash, hash) || row.revoked_at !== null) return null;
        return fromRaw(row);
      });
      if (key) usage.used(key.id);
      return key;
    },

    /** Notes a use of the key `id`, verified earlier by a caller that keeps what it verified (the widget's answers). */
    used: usage.used,

    /** The key with this id while it is not revoked (a console session acts with it), or null. */
    active(id: string): ApiKey | null {
      const row = byId.get(id);
      if (!row || row.revoked_at !== null) return null;
      usage.used(row.id);
      return fromRaw(row);
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
