import type { HookStatus, Platform } from './types.ts';
import { OutOfTime, Stopped } from '../lib/abort.ts';
import type { Clock } from '../lib/clock.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { PlatformApiError } from '../platforms/http.ts';
import { PLATFORM_A_HOOK_TOPICS } from '../platforms/platform-a.ts';
import { PLATFORM_B_HOOK_SCOPES } from '../platforms/platform-b.ts';
import { PLATFORM_C_HOOK_TOPICS } from '../platforms/platform-c.ts';
import type { StoreRecords } from '../storage/stores.ts';
import type { Job, JobHandler } from '../webhooks/queue.ts';
import { registersHooks, webhookUrlFor } from './connect.ts';
import { unregistrationChanges, type StoreRecord, type StoreRegistry } from './registry.ts';

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
  /** The removal's transactions (StoreRecords.stop, removeAll, finishDisconnect) and the holdings. */
  records: Pick<StoreRecords, 'stop' | 'holdings' | 'removeAll' | 'finishDisconnect'>;
  stores: StoreRegistry;
  clock: Clock;
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
export function createStoreRemoval({ records, stores, clock, settings, stopRuns, runNow, onStopped, unregisterWithinMs = UNREGISTER_WITHIN_MS }: RemovalDeps) {
  /**
   * Deletes the hooks svc registered for the store (as the store was before it was stopped), within
   * `signal` and `unregisterWithinMs`. Failures are returned, never thrown.
   */
  async function unregister(row: StoreRecord, signal: AbortSignal): Promise<HookRemoval> {
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
  const notRun = (row: StoreRecord): HookRemoval => ({
    outcome: 'failed',
    removed: [],
    left: MAY_HAVE_HOOKS.has(row.hookStatus) && registersHooks(stores.credentialsOf(row)) ? TOPICS[row.platform] : [],
    error: 'the server is shutting down',
    deliveryUrl: webhookUrlFor(settings.baseUrl, row),
    detail: 'svc could not ask the platform to delete its webhooks: remove them in the platform’s admin',
  });

  const handlers: Record<string, JobHandler> = {
    /** Taken up again after a restart that interrupted a removal or disconnect: the store, if it is still there and still disconnected, gets its outcome. */
    [UNREGISTER_JOB]: async (job: Job, signal: AbortSignal) => {
      const row = await stores.get(job.storeId);
      if (!row || row.status === 'active') return;
      await stores.recordUnregistration(row.id, await unregister(row, signal));
    },
  };

  return {
    handlers,
    /** What svc holds for the store (null for an unknown store). */
    holdings: async (storeId: string): Promise<StoreHoldings | null> => ((await stores.get(storeId)) ? records.holdings(storeId) : null),

    /** Remove the store (or with `keepData`, disconnect it); null for an unknown store. */
    async remove(storeId: string, keepData: boolean): Promise<RemovalOutcome | null> {
      const why = keepData ? 'the store was disconnected' : 'the store is being removed';
      const stopped = await records.stop(storeId, why, clock.now());
      if (!stopped) return null;
      onStopped?.(storeId, !keepData);
      await stopRuns(storeId, why);
      const hooks = (await runNow(UNREGISTER_JOB, storeId, (signal) => unregister(stopped.store, signal))) ?? notRun(stopped.store);
      if (keepData) {
        const { kept, dropped } = await records.finishDisconnect(storeId, unregistrationChanges(hooks), clock.now());
        return { id: storeId, keptData: true, removed: { ...ZERO, jobs: stopped.dropped + dropped }, kept, hooks };
      }
      return { id: storeId, keptData: false, removed: { ...(await records.removeAll(storeId)), jobs: stopped.dropped }, kept: null, hooks };
    },
  };
}

export type StoreRemoval = ReturnType<typeof createStoreRemoval>;
