import type { Clock } from '../lib/clock.ts';
import { randomSecret, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { ChangeFeed } from '../storage/changes.ts';
import type { KeyRecords, KeyUsageRecords } from '../storage/auth.ts';
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

/** A key as storage keeps it (src/storage/auth.ts): the SHA-256 of the key, never the key; times in epoch ms. */
export interface KeyRecord {
  id: string;
  name: string;
  keyHash: string;
  keyPrefix: string;
  scopes: string[];
  allowedDomains: string[];
  storeId: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** A stored key with when it was last used (epoch ms), null if never. */
export interface UsedKeyRecord extends KeyRecord {
  lastUsedAt: number | null;
}

export interface NewApiKey {
  name?: string | undefined;
  scopes: string[];
  allowedDomains?: string[] | undefined;
  storeId?: string | null | undefined;
}

export function toApiKey(record: KeyRecord): ApiKey {
  return {
    id: record.id,
    name: record.name,
    keyPrefix: record.keyPrefix,
    scopes: record.scopes,
    allowedDomains: record.allowedDomains,
    storeId: record.storeId,
    createdAt: isoOrNull(record.createdAt)!,
    revokedAt: isoOrNull(record.revokedAt),
  };
}

const listed = (record: UsedKeyRecord): ListedApiKey => ({ ...toApiKey(record), lastUsedAt: isoOrNull(record.lastUsedAt) });

/** Admin implies every other scope. */
export function keyHasScope(key: Pick<ApiKey, 'scopes'>, scope: Scope): boolean {
  return key.scopes.includes('admin') || key.scopes.includes(scope);
}

export function looksLikeApiKey(raw: string): boolean {
  return KEY_PATTERN.test(raw);
}

/** Verified keys kept in memory (src/auth/verified-cache.ts). */
const VERIFIED_KEYS = 10_000;

/** What the key store keeps in storage: the keys, and when each was last used. */
export interface KeyStorage {
  keys: KeyRecords;
  keyUsage: KeyUsageRecords;
}

/**
 * `storeExists` checks a `storeId` binding at creation (stores are another capability's records);
 * without it, bindings are taken as given. `changes` tells the verified keys kept in memory when
 * api_keys may have changed (by this process or another, such as the CLI revoking a key).
 */
export function createKeyStore({ keys, keyUsage }: KeyStorage, changes: ChangeFeed, clock: Clock, storeExists?: (id: string) => MaybePromise<boolean>) {
  // Verification runs on every authenticated request: a verified key is reused until api_keys changes.
  const verified = createVerifiedCache<ApiKey>(changes.tableStamp(['api_keys']), VERIFIED_KEYS);
  // Every key that verifies (or acts for a console session) is in use: noted at most once a minute per key.
  const usage = createKeyUsage(keyUsage, clock, VERIFIED_KEYS);
  /** The active key stored under `hash`, compared in constant time, or null (unknown or revoked). */
  const activeByHash = async (hash: string): Promise<ApiKey | null> => {
    const record = await keys.byHash(hash);
    if (!record || !safeEqual(record.keyHash, hash) || record.revokedAt !== null) return null;
    return toApiKey(record);
  };
  const noteUse = (key: ApiKey | null): ApiKey | null => {
    if (key) usage.used(key.id);
    return key;
  };

  return {
    /** Creates a key; the raw key is returned only here and never stored. */
    async create(input: NewApiKey): Promise<{ key: string; record: ListedApiKey }> {
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
      if (input.storeId && storeExists && !(await storeExists(input.storeId))) {
        throw new ApiError(400, 'unknown_store', `storeId ${JSON.stringify(input.storeId)} names no store`);
      }
      // products:read exists for the FAQ widget, which answers only for a key bound to a store: an
      // unbound one would be refused on every page (key_not_bound, seen by the browser as a CORS error).
      if (scopes.includes('products:read') && !scopes.includes('admin') && !input.storeId) {
        throw new ApiError(400, 'store_required', 'a products:read key is for the FAQ widget, which serves one store: give its storeId (svc keys create --store STORE_ID); admin keys need none');
      }
      const key = KEY_PREFIX + randomSecret(32);
      const record: KeyRecord = {
        id: newId(),
        name: input.name ?? '',
        keyHash: sha256Hex(key),
        keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
        scopes,
        allowedDomains: [...new Set(allowedDomains)],
        storeId: input.storeId ?? null,
        createdAt: clock.now(),
        revokedAt: null,
      };
      await keys.add(record);
      return { key, record: listed({ ...record, lastUsedAt: null }) };
    },

    /** Revokes a key at once; revoking twice keeps the first revocation time. */
    async revoke(id: string): Promise<ListedApiKey | null> {
      const record = await keys.revoke(id, clock.now());
      return record && listed(record);
    },

    /** Every key, revoked ones included, oldest first (by creation). */
    async list(): Promise<ListedApiKey[]> {
      return (await keys.list()).map(listed);
    },

    /**
     * The active key for a raw `sk_live_` string, or null (unknown, malformed or revoked).
     * Found by its SHA-256, in memory while api_keys is unchanged (then without a promise), else
     * in storage, whose stored hash is then compared in constant time.
     */
    verify(raw: string): MaybePromise<ApiKey | null> {
      if (!looksLikeApiKey(raw)) return null;
      const hash = sha256Hex(raw);
      const key = verified.get(hash, () => activeByHash(hash));
      return key instanceof Promise ? key.then(noteUse) : noteUse(key);
    },

    /** Notes a use of the key `id`, verified earlier by a caller that keeps what it verified (the widget's answers). */
    used: usage.used,

    /** The key with this id while it is not revoked (a console session acts with it), or null. */
    async active(id: string): Promise<ApiKey | null> {
      const record = await keys.byId(id);
      if (!record || record.revokedAt !== null) return null;
      usage.used(record.id);
      return toApiKey(record);
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
