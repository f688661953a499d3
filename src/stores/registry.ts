import type { CredentialKind, HookStatus, Platform } from './types.ts';
import type { Clock } from '../lib/clock.ts';
import { randomSecret } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import type { SecretBox } from '../lib/secrets.ts';
import type { StoreRecords } from '../storage/stores.ts';
import type { NewJob } from '../webhooks/queue.ts';
import type { ParsedCredentials, StoreCredentials } from './credentials.ts';
import type { StoreSettings } from './settings.ts';
import { isoOrNull } from '../lib/time.ts';

/** A connected store as stored. Credentials and the webhook secret are sealed (lib/secrets.ts), never returned by the API. */
export interface StoreRecord {
  id: string;
  platform: Platform;
  /** Storefront domain given by the operator (platform A: the `<name>.<suffix>` shop domain). */
  domain: string;
  /** What deliveries name the store by: A shop domain, B store hash, C site URL. Unique per platform. */
  platformRef: string;
  currency: string | null;
  status: 'active' | 'inactive';
  credentialKind: CredentialKind;
  credentials: string;
  webhookSecret: string | null;
  hookStatus: HookStatus;
  hookError: string | null;
  hookTopics: string[];
  hooksRegisteredAt: number | null;
  /** Platform C's creation ping arrived: the platform delivered to us at least once. */
  hooksConfirmedAt: number | null;
  deactivatedAt: number | null;
  /** Set by `app/uninstalled` and by a disconnect; the signals capability serves nothing for the store while set. */
  signalsWithdrawnAt: number | null;
  /** The operator disconnected the store, keeping its data (stores/removal.ts); cleared when credentials are saved again. */
  disconnectedAt: number | null;
  /** The operator paused its catalogue sync: no pass runs until it is resumed (sync/service.ts). */
  syncPausedAt: number | null;
  /** Merchant-listing facts set by the operator (stores/settings.ts): emitted on every offer. */
  settings: StoreSettings;
  createdAt: number;
  updatedAt: number;
}

/** A change of a store's hook state (StoreRecords.setHooks): the fields given are written. */
export type HookChanges = Partial<Pick<StoreRecord, 'hookStatus' | 'hookTopics' | 'hookError' | 'hooksRegisteredAt' | 'hooksConfirmedAt'>>;

/** New credentials as saved (StoreRecords.saveCredentials): sealed, with the state they start the store's hooks in. */
export type SavedCredentials = Pick<StoreRecord, 'platformRef' | 'credentialKind' | 'credentials' | 'webhookSecret' | 'hookStatus'> & { currency?: string };

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


export function toStoreView(row: StoreRecord): StoreView {
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

/** A new store's state before anything happened to it: no hooks registered, never deactivated, disconnected or paused, no settings. */
const NOTHING_HAPPENED_YET = { hookError: null, hookTopics: [], hooksRegisteredAt: null, hooksConfirmedAt: null, deactivatedAt: null, signalsWithdrawnAt: null, disconnectedAt: null, syncPausedAt: null, settings: {} } satisfies Partial<StoreRecord>;

/** Platforms B and C authenticate deliveries with a secret svc generates (kept across credential saves). */
const needsGeneratedSecret = (platform: Platform) => platform !== 'platform-a';

const sealContext = (storeId: string, field: string) => `store:${storeId}:${field}`;

/**
 * How long after svc registered a store's hooks a platform-C creation ping may still confirm them.
 * The platform pings while answering the registration call; the grace covers a slow or retried ping.
 */
export const PING_GRACE_MS = 10 * 60_000;

/**
 * What became of a store's hooks when it was disconnected, as its hook state: deleted
 * (`unregistered`), or some may be left (`unregister_failed`, with those topics and why). Null for
 * hooks svc never registered: they keep their state.
 */
export function unregistrationChanges(result: { outcome: 'unregistered' | 'failed' | 'none' | 'platform_managed'; left: string[]; error: string | null }): HookChanges | null {
  if (result.outcome !== 'unregistered' && result.outcome !== 'failed') return null;
  const failed = result.outcome === 'failed';
  return { hookStatus: failed ? 'unregister_failed' : 'unregistered', hookTopics: failed ? result.left : [], hookError: result.error, hooksRegisteredAt: null, hooksConfirmedAt: null };
}

/**
 * The stores over their records. `storeWrites` is the change feed's stamp of the stores table
 * (ChangeFeed.tableStamp(['stores'])): it moves on any write to it, by this process or another.
 */
export function createStoreRegistry(records: StoreRecords, storeWrites: () => string, secrets: SecretBox, clock: Clock) {
  /**
   * Stores found by id or platform reference, with their opened secrets, kept while the stores
   * table's stamp stands: a write to it empties the cache before the next lookup, so a changed
   * secret or status counts from the very next delivery. A hit answers at once (every webhook
   * delivery looks its store up); only a miss waits for the records. Only stores that exist are
   * kept (as many as the operator created), never a miss keyed by client input, and never a row
   * whose read began before the stamp last moved (it may predate the write that moved it).
   * Transactions are the records' own (no lookup runs inside one), so nothing read here can still
   * roll back.
   */
  let cachedStamp = '';
  const cachedById = new Map<string, StoreRecord>();
  const cachedByRef = new Map<string, StoreRecord>();
  const openedCredentials = new WeakMap<StoreRecord, StoreCredentials>();
  const openedWebhookSecrets = new WeakMap<StoreRecord, string | null>();
  function cached(cache: Map<string, StoreRecord>, key: string, read: () => Promise<StoreRecord | null>): MaybePromise<StoreRecord | null> {
    const stamp = storeWrites();
    if (stamp !== cachedStamp) {
      cachedById.clear();
      cachedByRef.clear();
      cachedStamp = stamp;
    }
    const hit = cache.get(key);
    if (hit) return hit;
    return andThen(read(), (row) => {
      if (row && cachedStamp === stamp && storeWrites() === stamp) cache.set(key, row);
      return row;
    });
  }

  /** A store's webhook secret as saved with new credentials: the one it has, sealed again under this svc's key; else a new one where its platform needs one. */
  function keptWebhookSecret(row: StoreRecord): string | null {
    const context = sealContext(row.id, 'webhook-secret');
    if (row.webhookSecret !== null) return secrets.seal(secrets.open(row.webhookSecret, context), context);
    return needsGeneratedSecret(row.platform) ? secrets.seal(randomSecret(32), context) : null;
  }

  return {
    /** The store, at once when it is cached (a promise only when it must be read). */
    get: (id: string): MaybePromise<StoreRecord | null> => cached(cachedById, id, () => records.byId(id)),
    list: (): Promise<StoreRecord[]> => records.list(),
    findByRef: (platform: Platform, ref: string): MaybePromise<StoreRecord | null> => cached(cachedByRef, `${platform}\n${ref}`, () => records.byRef(platform, ref)),

    /**
     * Null when another store of the platform already has this reference (shop domain, hash, site).
     * `connection` makes the job that connects the store, stored with it.
     */
    create(input: { platform: Platform; domain: string; currency: string | null; parsed: ParsedCredentials }, connection?: (storeId: string) => NewJob | undefined): Promise<StoreRecord | null> {
      const id = newId();
      const now = clock.now();
      return records.add(
        {
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
          ...NOTHING_HAPPENED_YET,
          createdAt: now,
          updatedAt: now,
        },
        connection?.(id),
      );
    },

    /**
     * Replace the credentials; the webhook secret is kept so hooks already registered stay valid,
     * sealed again under this svc's key (one stored in clear before a key was set is sealed now).
     * Saving credentials again reconnects an uninstalled store; `connection` (the job that connects
     * it) is stored with them. Null on a reference conflict (or when the store is gone).
     */
    async saveCredentials(row: StoreRecord, parsed: ParsedCredentials, currency?: string, connection?: NewJob): Promise<StoreRecord | null> {
      const saved = await records.saveCredentials(
        row.id,
        {
          platformRef: parsed.platformRef,
          credentialKind: parsed.credentials.kind,
          credentials: secrets.seal(JSON.stringify(parsed.credentials), sealContext(row.id, 'credentials')),
          webhookSecret: keptWebhookSecret(row),
          hookStatus: initialHookStatus(parsed.credentials),
          ...(currency === undefined ? {} : { currency }),
        },
        clock.now(),
        connection,
      );
      // The only string it answers is 'ref_taken' (another store holds that platform reference).
      return typeof saved === 'string' ? null : saved;
    },

    /**
     * Why stored secrets do not open with this svc's key (sealed under another key, or none set),
     * else null: checked at start. Every sealed value is tried, each store's credentials and webhook
     * secret: the sealed format names no key, and a database can hold values sealed under two keys
     * (earlier versions kept a webhook secret as it was when credentials were saved under a changed
     * key). About 5 µs a value.
     */
    async sealedCredentialsProblem(): Promise<string | null> {
      let first: string | null = null;
      let failed = 0;
      for (const row of await records.sealedValues()) {
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
    credentialsOf(row: StoreRecord): StoreCredentials {
      let credentials = openedCredentials.get(row);
      if (!credentials) openedCredentials.set(row, (credentials = JSON.parse(secrets.open(row.credentials, sealContext(row.id, 'credentials'))) as StoreCredentials));
      return credentials;
    },
    webhookSecretOf(row: StoreRecord): string | null {
      let webhookSecret = openedWebhookSecrets.get(row);
      if (webhookSecret === undefined) openedWebhookSecrets.set(row, (webhookSecret = row.webhookSecret === null ? null : secrets.open(row.webhookSecret, sealContext(row.id, 'webhook-secret'))));
      return webhookSecret;
    },

    async recordHooks(id: string, result: { status: HookStatus; topics: string[]; error: string | null }): Promise<StoreRecord> {
      const now = clock.now();
      const row = await records.setHooks(id, { hookStatus: result.status, hookTopics: result.topics, hookError: result.error, hooksRegisteredAt: result.status === 'registered' ? now : null }, now);
      return row ?? gone(id);
    },

    /** svc is registering the store's hooks (in the background): shown until the outcome is recorded. */
    async markRegistering(id: string): Promise<void> {
      await records.setHooks(id, { hookStatus: 'registering', hookError: null }, null);
    },

    /**
     * Open the store's window for the creation ping, for PING_GRACE_MS from now: as the registration
     * call starts (longer than any call lasts: a job's run has a budget of under a minute), and again
     * as it ends. It is kept in the database, so a ping that reaches another instance than the one
     * registering is honoured too, and it closes on its own should the registering instance die.
     */
    awaitPing: async (id: string): Promise<void> => {
      const now = clock.now();
      await records.openPingWindow(id, now, now + PING_GRACE_MS);
    },

    /** The creation ping arrived: confirms the hooks only while svc awaits it for this store (false otherwise, nothing written); a clock set back before the window opened closes it. */
    confirmHooks: (id: string): Promise<boolean> => records.confirmPing(id, clock.now()),

    /** Replace the store's settings; `updatedAt` moves, so cached signals of the store are rendered again. Null for an unknown store. */
    saveSettings: (id: string, settings: StoreSettings): Promise<StoreRecord | null> => records.saveSettings(id, settings, clock.now()),

    async setCurrency(id: string, currency: string): Promise<StoreRecord> {
      return (await records.setCurrency(id, currency, clock.now())) ?? gone(id);
    },

    /**
     * The operator disconnects the store (or begins its removal): inactive, every signal withdrawn,
     * recorded as store events (once: disconnecting again changes nothing). `updated_at` moves (it is
     * part of the signals' version stamp).
     */
    disconnect: (id: string): Promise<StoreRecord | null> => records.disconnect(id, clock.now()),

    /** What became of the store's hooks when it was disconnected (unregistrationChanges); hooks svc never registered keep their state. */
    async recordUnregistration(id: string, result: Parameters<typeof unregistrationChanges>[0]): Promise<void> {
      const changes = unregistrationChanges(result);
      if (changes) await records.setHooks(id, changes, clock.now());
    },

    /** `app/uninstalled`: inactive, every signal withdrawn, both recorded as store events. */
    deactivate: (id: string): Promise<void> => records.deactivate(id, clock.now()),
  };
}

/** A store that was there a moment ago is gone (removed meanwhile). */
function gone(id: string): never {
  throw new Error(`store ${id} was removed meanwhile`);
}

export type StoreRegistry = ReturnType<typeof createStoreRegistry>;
