import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { storeEvents, stores, type StoreRow } from '../db/schema/index.ts';
import type { HookStatus, Platform } from './types.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import type { SecretBox } from '../lib/secrets.ts';
import type { ParsedCredentials, StoreCredentials } from './credentials.ts';
import type { StoreSettings } from './settings.ts';
import { createTableWriteStamp } from '../lib/table-writes.ts';
import { isoOrNull } from '../lib/time.ts';

/** A store as the admin API shows it: never a credential or secret. */
export interface StoreView {
  id: string;
  platform: Platform;
  domain: string;
  currency: string | null;
  status: 'active' | 'inactive';
  credentialKind: string;
  hooks: { status: HookStatus; topics: string[]; error: string | null; registeredAt: string | null; confirmedAt: string | null };
  createdAt: string;
  updatedAt: string;
  deactivatedAt: string | null;
  signalsWithdrawnAt: string | null;
  /** When the operator disconnected the store (its data kept); null once credentials are saved again. */
  disconnectedAt: string | null;
  /** Merchant-listing facts (stores/settings.ts); `{}` until set. */
  settings: StoreSettings;
}


export function toStoreView(row: StoreRow): StoreView {
  return {
    id: row.id,
    platform: row.platform,
    domain: row.domain,
    currency: row.currency,
    status: row.status,
    credentialKind: row.credentialKind,
    hooks: { status: row.hookStatus, topics: row.hookTopics, error: row.hookError, registeredAt: isoOrNull(row.hooksRegisteredAt), confirmedAt: isoOrNull(row.hooksConfirmedAt) },
    createdAt: isoOrNull(row.createdAt)!,
    updatedAt: isoOrNull(row.updatedAt)!,
    deactivatedAt: isoOrNull(row.deactivatedAt),
    signalsWithdrawnAt: isoOrNull(row.signalsWithdrawnAt),
    disconnectedAt: isoOrNull(row.disconnectedAt),
    settings: row.settings,
  };
}

/** Hook state right after credentials are saved, before any registration call. */
function initialHookStatus(credentials: StoreCredentials): HookStatus {
  if (credentials.kind === 'token-only') return 'not_required';
  if (credentials.kind === 'via-app') return 'platform_managed';
  return 'pending';
}

/** Platforms B and C authenticate deliveries with a secret svc generates (kept across credential saves). */
const needsGeneratedSecret = (platform: Platform) => platform !== 'platform-a';

const sealContext = (storeId: string, field: string) => `store:${storeId}:${field}`;

/**
 * How long after svc registered a store's hooks a platform-C creation ping may still confirm them.
 * The platform pings while answering the registration call; the grace covers a slow or retried ping.
 */
export const PING_GRACE_MS = 10 * 60_000;

export function createStoreRegistry(db: Db, secrets: SecretBox, clock: Clock) {
  /**
   * Stores whose hooks svc is registering or has just registered, with their window for the
   * unsigned creation ping: when it opened and when it closes (Infinity while the registration call
   * runs). A clock set back before the opening closes it: it never stretches. In memory: entries
   * come only from an administrator's registration, so the map stays as small as that.
   */
  const awaitingPing = new Map<string, { opened: number; until: number }>();
  const pingWindowOpen = (window: { opened: number; until: number } | undefined, now: number) => window !== undefined && window.opened <= now && now < window.until;
  // Prepared once: every webhook delivery looks its store up.
  const byIdStatement = db.select().from(stores).where(eq(stores.id, sql.placeholder('id'))).prepare();
  const byRefStatement = db
    .select()
    .from(stores)
    .where(and(eq(stores.platform, sql.placeholder('platform')), eq(stores.platformRef, sql.placeholder('ref'))))
    .prepare();

  /**
   * Stores found by id or platform reference, with their opened secrets, kept while nothing changed
   * the stores table: any write to it through this connection moves a counter kept by temporary
   * triggers (whatever code wrote it), a commit by any other connection (the CLI, another process)
   * moves SQLite's `data_version`; either empties the cache before the next lookup, so a changed
   * secret or status counts from the very next delivery. Only stores that exist are kept (as many as
   * the operator created), never a miss keyed by client input.
   */
  const sqlite = db.$client;
  const storeWrites = createTableWriteStamp(sqlite, 'store_writes', ['stores']);
  let cachedStamp = '';
  const cachedById = new Map<string, StoreRow>();
  const cachedByRef = new Map<string, StoreRow>();
  const openedCredentials = new WeakMap<StoreRow, StoreCredentials>();
  const openedWebhookSecrets = new WeakMap<StoreRow, string | null>();
  /** A lookup through the cache; rows read inside an open transaction are not kept (it may still roll back). */
  function cached(cache: Map<string, StoreRow>, key: string, read: () => StoreRow | undefined): StoreRow | null {
    const stamp = storeWrites();
    if (stamp !== cachedStamp) {
      cachedById.clear();
      cachedByRef.clear();
      cachedStamp = stamp;
    }
    const hit = cache.get(key);
    if (hit) return hit;
    const row = read() ?? null;
    if (row && !sqlite.inTransaction) cache.set(key, row);
    return row;
  }
  const byId = (id: string): StoreRow | null => cached(cachedById, id, () => byIdStatement.get({ id }));

  /** A store's webhook secret as saved with new credentials: the one it has, sealed again under this svc's key; else a new one where its platform needs one. */
  function keptWebhookSecret(row: StoreRow): string | null {
    const context = sealContext(row.id, 'webhook-secret');
    if (row.webhookSecret !== null) return secrets.seal(secrets.open(row.webhookSecret, context), context);
    return needsGeneratedSecret(row.platform) ? secrets.seal(randomSecret(32), context) : null;
  }

  return {
    get: byId,
    list: (): StoreRow[] => db.select().from(stores).orderBy(stores.createdAt, stores.id).all(),
    findByRef: (platform: Platform, ref: string): StoreRow | null => cached(cachedByRef, `${platform}\n${ref}`, () => byRefStatement.get({ platform, ref })),

    /** Null when another store of the platform already has this reference (shop domain, hash, site). */
    create(input: { platform: Platform; domain: string; currency: string | null; parsed: ParsedCredentials }): StoreRow | null {
      const id = newId();
      const now = clock.now();
      return (
        db
          .insert(stores)
          .values({
            id,
            platform: input.platform,
            domain: input.domain,
            platformRef: input.parsed.platformRef,
            currency: input.currency,
            status: 'active',
            credentialKind: input.parsed.credentials.kind,
            credentials: secrets.seal(JSON.stringify(input.parsed.credentials), sealContext(id, 'credentials')),
            webhookSecret: needsGeneratedSecret(input.platform) ? secrets.seal(randomSecret(32), sealContext(id, 'webhook-secret')) : null,
            hookStatus: initialHookStatus(input.parsed.credentials),
            hookTopics: [],
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoNothing()
          .returning()
          .get() ?? null
      );
    },

    /**
     * Replace the credentials; the webhook secret is kept so hooks already registered stay valid,
     * sealed again under this svc's key (one stored in clear before a key was set is sealed now).
     * Saving credentials again reconnects an uninstalled store. Null on a reference conflict.
     */
    saveCredentials(row: StoreRow, parsed: ParsedCredentials, currency?: string): StoreRow | null {
      const conflict = db.select({ id: stores.id }).from(stores).where(and(eq(stores.platform, row.platform), eq(stores.platformRef, parsed.platformRef))).get();
      if (conflict && conflict.id !== row.id) return null;
      return db
        .update(stores)
        .set({
          platformRef: parsed.platformRef,
          credentialKind: parsed.credentials.kind,
          credentials: secrets.seal(JSON.stringify(parsed.credentials), sealContext(row.id, 'credentials')),
          webhookSecret: keptWebhookSecret(row),
          hookStatus: initialHookStatus(parsed.credentials),
          hookError: null,
          hookTopics: [],
          status: 'active',
          deactivatedAt: null,
          signalsWithdrawnAt: null,
          disconnectedAt: null,
          ...(currency === undefined ? {} : { currency }),
          updatedAt: clock.now(),
        })
        .where(eq(stores.id, row.id))
        .returning()
        .get()!;
    },

    /**
     * Why stored secrets do not open with this svc's key (sealed under another key, or none set),
     * else null: checked at start. Every sealed value is tried, each store's credentials and webhook
     * secret: the sealed format names no key, and a database can hold values sealed under two keys
     * (earlier versions kept a webhook secret as it was when credentials were saved under a changed
     * key). About 5 µs a value.
     */
    sealedCredentialsProblem(): string | null {
      const rows = db
        .select({ id: stores.id, credentials: stores.credentials, webhookSecret: stores.webhookSecret })
        .from(stores)
        .where(sql`${stores.credentials} NOT LIKE 'plain:%' OR ${stores.webhookSecret} NOT LIKE 'plain:%'`)
        .orderBy(stores.id)
        .all();
      let first: string | null = null;
      let failed = 0;
      for (const row of rows) {
        for (const [field, value] of [['credentials', row.credentials], ['webhook-secret', row.webhookSecret]] as const) {
          if (value === null) continue;
          try {
            secrets.open(value, sealContext(row.id, field));
          } catch (error) {
            failed++;
            first ??= `store ${row.id}, ${field}: ${(error as Error).message}`;
          }
        }
      }
      return failed > 1 ? `${first}; ${failed - 1} more sealed value(s) do not open either` : first;
    },

    /** Opened once per row read (a changed store is a new row); callers must not modify the result. */
    credentialsOf(row: StoreRow): StoreCredentials {
      let credentials = openedCredentials.get(row);
      if (!credentials) openedCredentials.set(row, (credentials = JSON.parse(secrets.open(row.credentials, sealContext(row.id, 'credentials'))) as StoreCredentials));
      return credentials;
    },
    webhookSecretOf(row: StoreRow): string | null {
      let webhookSecret = openedWebhookSecrets.get(row);
      if (webhookSecret === undefined) openedWebhookSecrets.set(row, (webhookSecret = row.webhookSecret === null ? null : secrets.open(row.webhookSecret, sealContext(row.id, 'webhook-secret'))));
      return webhookSecret;
    },

    recordHooks(id: string, result: { status: HookStatus; topics: string[]; error: string | null }): StoreRow {
      const now = clock.now();
      return db
        .update(stores)
        .set({ hookStatus: result.status, hookTopics: result.topics, hookError: result.error, hooksRegisteredAt: result.status === 'registered' ? now : null, updatedAt: now })
        .where(eq(stores.id, id))
        .returning()
        .get()!;
    },

    /** svc is registering the store's hooks (in the background): shown until the outcome is recorded. */
    markRegistering(id: string): void {
      db.update(stores).set({ hookStatus: 'registering', hookError: null }).where(eq(stores.id, id)).run();
    },

    /**
     * Open (`registering`: until the call ends) or restart (`registered`: for PING_GRACE_MS) the
     * store's window for the creation ping; windows that closed are dropped on the way.
     */
    awaitPing(id: string, phase: 'registering' | 'registered'): void {
      const now = clock.now();
      for (const [other, window] of awaitingPing) if (!pingWindowOpen(window, now)) awaitingPing.delete(other);
      awaitingPing.set(id, { opened: now, until: phase === 'registering' ? Infinity : now + PING_GRACE_MS });
    },

    /** The creation ping arrived: confirms the hooks only while svc awaits it for this store (false otherwise, nothing written). */
    confirmHooks(id: string): boolean {
      const now = clock.now();
      if (!pingWindowOpen(awaitingPing.get(id), now)) return false;
      db.update(stores).set({ hooksConfirmedAt: now }).where(eq(stores.id, id)).run();
      return true;
    },

    /** Replace the store's settings; `updatedAt` moves, so cached signals of the store are rendered again. Null for an unknown store. */
    saveSettings(id: string, settings: StoreSettings): StoreRow | null {
      // At least 1 ms later than before: updated_at is part of the signals' version stamp.
      return db.update(stores).set({ settings, updatedAt: sql`max(${clock.now()}, ${stores.updatedAt} + 1)` }).where(eq(stores.id, id)).returning().get() ?? null;
    },

    setCurrency(id: string, currency: string): StoreRow {
      return db.update(stores).set({ currency, updatedAt: clock.now() }).where(eq(stores.id, id)).returning().get()!;
    },

    /**
     * The operator disconnects the store (or begins its removal): inactive, every signal withdrawn,
     * recorded as store events (once: disconnecting again changes nothing). `updated_at` moves (it is
     * part of the signals' version stamp).
     */
    disconnect(id: string): StoreRow | null {
      const before = byIdStatement.get({ id });
      if (!before) return null;
      const now = clock.now();
      const row = db
        .update(stores)
        .set({ status: 'inactive', deactivatedAt: before.deactivatedAt ?? now, disconnectedAt: before.disconnectedAt ?? now, signalsWithdrawnAt: before.signalsWithdrawnAt ?? now, updatedAt: sql`max(${now}, ${stores.updatedAt} + 1)` })
        .where(eq(stores.id, id))
        .returning()
        .get()!;
      const events = [...(before.disconnectedAt === null ? ['disconnected'] : []), ...(before.signalsWithdrawnAt === null ? ['signals_withdrawn'] : [])];
      if (events.length > 0) db.insert(storeEvents).values(events.map((kind) => ({ id: newId(), storeId: id, kind, occurredAt: now }))).run();
      return row;
    },

    /**
     * What became of the store's hooks when it was disconnected: deleted (`unregistered`), or some
     * may be left (`unregister_failed`, with those topics and why). Hooks svc never registered keep their state.
     */
    recordUnregistration(id: string, result: { outcome: 'unregistered' | 'failed' | 'none' | 'platform_managed'; left: string[]; error: string | null }): void {
      if (result.outcome !== 'unregistered' && result.outcome !== 'failed') return;
      const failed = result.outcome === 'failed';
      db.update(stores)
        .set({ hookStatus: failed ? 'unregister_failed' : 'unregistered', hookTopics: failed ? result.left : [], hookError: result.error, hooksRegisteredAt: null, hooksConfirmedAt: null, updatedAt: clock.now() })
        .where(eq(stores.id, id))
        .run();
    },

    /** Pause (keeping the first pause's time) or resume the store's catalogue sync; null for an unknown store. */
    setSyncPaused(id: string, paused: boolean): StoreRow | null {
      return db.update(stores).set({ syncPausedAt: paused ? sql`coalesce(${stores.syncPausedAt}, ${clock.now()})` : null }).where(eq(stores.id, id)).returning().get() ?? null;
    },

    /** `app/uninstalled`: inactive, every signal withdrawn, both recorded as store events. */
    deactivate(id: string): void {
      const now = clock.now();
      db.update(stores).set({ status: 'inactive', deactivatedAt: now, signalsWithdrawnAt: now, updatedAt: now }).where(eq(stores.id, id)).run();
      db.insert(storeEvents).values([
        { id: newId(), storeId: id, kind: 'app_uninstalled', occurredAt: now },
        { id: newId(), storeId: id, kind: 'signals_withdrawn', occurredAt: now },
      ]).run();
    },

    recordEvent(id: string, kind: string): void {
      db.insert(storeEvents).values({ id: newId(), storeId: id, kind, occurredAt: clock.now() }).run();
    },
  };
}

export type StoreRegistry = ReturnType<typeof createStoreRegistry>;
