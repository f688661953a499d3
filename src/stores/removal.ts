import type { Database } from 'bun:sqlite';
import type { JobRow, StoreRow } from '../db/schema/index.ts';
import type { HookStatus, Platform } from './types.ts';
import { OutOfTime, Stopped } from '../lib/abort.ts';
import { writeTransaction } from '../lib/write-transaction.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { PlatformApiError } from '../platforms/http.ts';
import { PLATFORM_A_HOOK_TOPICS } from '../platforms/platform-a.ts';
import { PLATFORM_B_HOOK_SCOPES } from '../platforms/platform-b.ts';
import { PLATFORM_C_HOOK_TOPICS } from '../platforms/platform-c.ts';
import type { JobHandler } from '../webhooks/queue.ts';
import { registersHooks, webhookUrlFor } from './connect.ts';
import type { StoreRegistry } from './registry.ts';

/**
 * What svc holds for a store, by kind: what a removal deletes (and the console's confirmation
 * names), or what a disconnect keeps. `products` counts the live ones; the variants of every
 * product and the tombstones of removed ones go with them.
 */
export interface StoreHoldings {
  products: number;
  enrichments: number;
  faqs: number;
  categories: number;
  pages: number;
  deliveries: number;
  orderSignals: number;
  storeEvents: number;
  /** API keys bound to the store (the widget's keys): deleted with it, so they stop working at once. */
  keys: number;
}

const HOLDINGS_SQL = `SELECT
  (SELECT count(*) FROM products WHERE store_id = ?1 AND removed_at IS NULL) AS products,
  (SELECT count(*) FROM product_enrichments WHERE store_id = ?1) AS enrichments,
  (SELECT count(*) FROM faq_entries WHERE store_id = ?1) AS faqs,
  (SELECT count(*) FROM catalog_entries WHERE store_id = ?1 AND type = 'category') AS categories,
  (SELECT count(*) FROM catalog_entries WHERE store_id = ?1 AND type = 'page') AS pages,
  (SELECT count(*) FROM webhook_deliveries WHERE store_id = ?1) AS deliveries,
  (SELECT count(*) FROM order_signals WHERE store_id = ?1) AS orderSignals,
  (SELECT count(*) FROM store_events WHERE store_id = ?1) AS storeEvents,
  (SELECT count(*) FROM api_keys WHERE store_id = ?1) AS keys`;

/**
 * Every row that names the store, rows that reference others first (foreign keys are enforced):
 * the catalogue and what hangs off it, FAQs, sync state, the delivery log, order signals, store
 * events, jobs of any state, the keys bound to it (their console sessions go with them), then the
 * store. The delivery log, order signals and jobs have no index by store (each would cost every
 * delivery a write): those three are read through once.
 */
const DELETES = [
  'DELETE FROM product_variants WHERE product_row_id IN (SELECT id FROM products WHERE store_id = ?1)',
  'DELETE FROM product_enrichments WHERE store_id = ?1',
  'DELETE FROM products WHERE store_id = ?1',
  'DELETE FROM catalog_entries WHERE store_id = ?1',
  'DELETE FROM faq_entries WHERE store_id = ?1',
  'DELETE FROM faq_entity_changes WHERE store_id = ?1',
  'DELETE FROM catalog_syncs WHERE store_id = ?1',
  'DELETE FROM webhook_deliveries WHERE store_id = ?1',
  'DELETE FROM order_signals WHERE store_id = ?1',
  'DELETE FROM store_events WHERE store_id = ?1',
  'DELETE FROM jobs WHERE store_id = ?1',
  'DELETE FROM api_keys WHERE store_id = ?1',
  'DELETE FROM stores WHERE id = ?1',
];

/** What became of the store's webhooks at the platform. */
export interface HookRemoval {
  /**
   * `unregistered`: svc deleted the hooks it had registered (or found none left); `failed`: the
   * platform did not confirm every deletion (`left`, `error`); `none`: svc had registered none
   * (a permanent token, never registered, already unregistered); `platform_managed`: svc's
   * platform-A app, whose hooks come and go with the app's install.
   */
  outcome: 'unregistered' | 'failed' | 'none' | 'platform_managed';
  /** Topics whose hooks the platform confirmed deleted. */
  removed: string[];
  /** Topics svc registers whose hooks may still be there: remove them by hand. */
  left: string[];
  /** Why the unregistration failed (the call and the kind of failure, never the platform's text). */
  error: string | null;
  /** Where those hooks deliver: how to find them in the platform's admin. */
  deliveryUrl: string;
  /** What the operator should know or do, in a sentence. */
  detail: string;
}

/** What a removal (or a disconnect) did. */
export interface RemovalOutcome {
  id: string;
  keptData: boolean;
  /** What was deleted (all zero but `jobs` for a disconnect); `jobs`: its unfinished jobs, dropped (those running stopped). */
  removed: StoreHoldings & { jobs: number };
  /** A disconnect: what it kept. Null for a removal. */
  kept: StoreHoldings | null;
  hooks: HookRemoval;
}

/** The job that deletes a store's hooks at its platform (a removal or a disconnect runs it at once). */
export const UNREGISTER_JOB = 'store.unregister-hooks';

/** How long a removal waits for the platform to confirm the deletion of the hooks before going on without (stores/docs.ts). */
export const UNREGISTER_WITHIN_MS = 10_000;

/** Hook states in which svc may have hooks at the platform: registered, being or failed to be registered, or left by a failed unregistration. */
const MAY_HAVE_HOOKS = new Set<HookStatus>(['registered', 'registering', 'failed', 'unregister_failed']);

const TOPICS: Record<Platform, string[]> = { 'platform-a': PLATFORM_A_HOOK_TOPICS, 'platform-b': PLATFORM_B_HOOK_SCOPES, 'platform-c': PLATFORM_C_HOOK_TOPICS };

const ZERO: StoreHoldings = { products: 0, enrichments: 0, faqs: 0, categories: 0, pages: 0, deliveries: 0, orderSignals: 0, storeEvents: 0, keys: 0 };

interface RemovalDeps {
  sqlite: Database;
  stores: StoreRegistry;
  queue: { dropUnfinished(storeId: string): number };
  sync: { stopRunning(storeId: string, reason: string): void };
  settings: PlatformSettings;
  /** Stops the runs in hand of the store's jobs and resolves once they have ended (JobRunner.stopStore). */
  stopRuns(storeId: string, why: string): Promise<number>;
  /** Runs `work` now as a job of `kind` for the store (JobRunner.runClaimed); undefined when the runner is stopped. */
  runNow<T>(kind: string, storeId: string, work: (signal: AbortSignal) => Promise<T>): Promise<T | undefined>;
  /** The store's deliveries verified but not yet committed: refused (removed) or ignored (disconnected). */
  onStopped?: ((storeId: string, removed: boolean) => void) | undefined;
  /** How long the platform gets to confirm the deletion of the hooks (UNREGISTER_WITHIN_MS). */
  unregisterWithinMs?: number | undefined;
}

/**
 * Removing a store, or disconnecting it (its data kept). First, in one transaction, the store goes
 * inactive with its signals withdrawn (deliveries are ignored from then on, nothing serves its
 * signals or FAQs), its passes under way end and its unfinished jobs are dropped; the runs in hand
 * are stopped. Then svc deletes the hooks it registered at the platform, in a job of its own with
 * `unregisterWithinMs` to finish: a platform that does not answer never holds the removal up, and
 * what may be left is reported. Last, in one transaction: a removal deletes every row of the store
 * (after it, deliveries for it are refused like those for a store svc never had); a disconnect
 * records what became of the hooks and keeps everything else, to be reconnected with new credentials.
 */
export function createStoreRemoval({ sqlite, stores, queue, sync, settings, stopRuns, runNow, onStopped, unregisterWithinMs = UNREGISTER_WITHIN_MS }: RemovalDeps) {
  const holdingsQuery = sqlite.query<StoreHoldings, [string]>(HOLDINGS_SQL);
  const deletes = DELETES.map((statement) => sqlite.query<never, [string]>(statement));
  const holdings = (storeId: string): StoreHoldings => ({ ...holdingsQuery.get(storeId)! });

  /** The store inactive, its passes ended, its unfinished jobs dropped; null when there is no such store. */
  const stopWork = writeTransaction(sqlite, (storeId: string, reason: string): { row: StoreRow; dropped: number } | null => {
    const row = stores.get(storeId);
    if (!row) return null;
    stores.disconnect(storeId);
    sync.stopRunning(storeId, reason);
    return { row, dropped: queue.dropUnfinished(storeId) };
  });

  const finishRemoval = writeTransaction(sqlite, (storeId: string): StoreHoldings => {
    const removed = holdings(storeId);
    for (const statement of deletes) statement.run(storeId);
    return removed;
  });

  const finishDisconnect = writeTransaction(sqlite, (storeId: string, hooks: HookRemoval): { kept: StoreHoldings; dropped: number } => {
    stores.recordUnregistration(storeId, hooks);
    return { kept: holdings(storeId), dropped: queue.dropUnfinished(storeId) };
  });

  /**
   * Deletes the hooks svc registered for the store (as the store was before it was stopped), within
   * `signal` and `unregisterWithinMs`. Failures are returned, never thrown.
   */
  async function unregister(row: StoreRow, signal: AbortSignal): Promise<HookRemoval> {
    const deliveryUrl = webhookUrlFor(settings.baseUrl, row);
    const credentials = stores.credentialsOf(row);
    const result = (outcome: HookRemoval['outcome'], detail: string, removed: string[] = [], left: string[] = [], error: string | null = null): HookRemoval => ({ outcome, removed, left, error, deliveryUrl, detail });
    if (credentials.kind === 'via-app') {
      return result('platform_managed', "svc's platform-A app registers its hooks with the install: uninstall the app from the shop to stop its deliveries (svc does not apply them)");
    }
    if (!registersHooks(credentials) || !MAY_HAVE_HOOKS.has(row.hookStatus)) return result('none', 'svc had registered no webhooks for this store at its platform');
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new OutOfTime(unregisterWithinMs)), unregisterWithinMs);
    const api = clientFor(row, credentials, settings, AbortSignal.any([signal, deadline.signal]))!;
    const removed: string[] = [];
    try {
      await api.client.unregisterHooks(deliveryUrl, removed);
      return result('unregistered', removed.length ? 'svc deleted its webhooks at the platform' : 'the platform had none of svc’s webhooks left for this store', removed);
    } catch (error) {
      if (!(error instanceof PlatformApiError || error instanceof OutOfTime || error instanceof Stopped)) throw error;
      const left = TOPICS[row.platform].filter((topic) => !removed.includes(topic));
      return result('failed', `the platform did not confirm that every webhook is deleted: remove those that deliver to ${deliveryUrl} in the platform's admin`, removed, left, error.message);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The unregistration when the runner was stopped before it could run it (the shutdown). */
  const notRun = (row: StoreRow): HookRemoval => ({
    outcome: 'failed',
    removed: [],
    left: MAY_HAVE_HOOKS.has(row.hookStatus) && registersHooks(stores.credentialsOf(row)) ? TOPICS[row.platform] : [],
    error: 'the server is shutting down',
    deliveryUrl: webhookUrlFor(settings.baseUrl, row),
    detail: 'svc could not ask the platform to delete its webhooks: remove them in the platform’s admin',
  });

  const handlers: Record<string, JobHandler> = {
    /** Taken up again after a restart that interrupted a removal or disconnect: the store, if it is still there and still disconnected, gets its outcome. */
    [UNREGISTER_JOB]: async (job: JobRow, signal: AbortSignal) => {
      const row = stores.get(job.storeId);
      if (!row || row.status === 'active') return;
      stores.recordUnregistration(row.id, await unregister(row, signal));
    },
  };

  return {
    handlers,
    /** What svc holds for the store (null for an unknown store). */
    holdings: (storeId: string): StoreHoldings | null => (stores.get(storeId) ? holdings(storeId) : null),

    /** Remove the store (or with `keepData`, disconnect it); null for an unknown store. */
    async remove(storeId: string, keepData: boolean): Promise<RemovalOutcome | null> {
      const stopped = stopWork(storeId, keepData ? 'the store was disconnected' : 'the store is being removed');
      if (!stopped) return null;
      onStopped?.(storeId, !keepData);
      await stopRuns(storeId, keepData ? 'the store was disconnected' : 'the store is being removed');
      const hooks = (await runNow(UNREGISTER_JOB, storeId, (signal) => unregister(stopped.row, signal))) ?? notRun(stopped.row);
      if (keepData) {
        const { kept, dropped } = finishDisconnect(storeId, hooks);
        return { id: storeId, keptData: true, removed: { ...ZERO, jobs: stopped.dropped + dropped }, kept, hooks };
      }
      return { id: storeId, keptData: false, removed: { ...finishRemoval(storeId), jobs: stopped.dropped }, kept: null, hooks };
    },
  };
}

export type StoreRemoval = ReturnType<typeof createStoreRemoval>;
