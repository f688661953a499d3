import { createCatalogEntries } from '../catalog/entries.ts';
import type { CatalogInTransaction } from '../catalog/products.ts';
import type { UnlistedChunk } from '../catalog/sweep.ts';
import type { CatalogSyncRow, JobRow, StoreRow } from '../db/schema/index.ts';
import { SYNC_KINDS, type SyncKind, type SyncTrigger } from './types.ts';
import type { AppDatabase } from '../db/index.ts';
import type { Clock } from '../lib/clock.ts';
import { Stopped } from '../lib/abort.ts';
import { backoffMs } from '../lib/backoff.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { inBatches } from '../lib/periodic.ts';
import { writePause } from '../lib/write-pause.ts';
import { writeTransaction } from '../lib/write-transaction.ts';
import { apiTargetOf, type PlatformSettings } from '../platforms/clients.ts';
import { DEFAULT_RETRY, PlatformProtocolError, PlatformThrottled } from '../platforms/http.ts';
import type { CatalogPage } from '../platforms/types.ts';
import type { EntryData } from '../catalog/entry-data.ts';
import type { ProductData } from '../catalog/product-data.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import type { JobContinuation, JobHandler, JobQueue } from '../webhooks/queue.ts';
import { ENTRY_TYPE_OF, entrySource, productSource, type SyncSource } from './sources.ts';
import { createSyncState, failedPassesOf, toSyncView, type SyncView } from './state.ts';
import { sqliteCatalogEntryRecordsSync } from '../storage/sqlite/catalog.ts';

export type SyncLog = (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;

interface SyncDeps {
  database: Pick<AppDatabase, 'db' | 'sqlite'>;
  stores: StoreRegistry;
  /** Written inside the batches' transactions. */
  catalog: CatalogInTransaction;
  queue: JobQueue;
  clock: Clock;
  settings: PlatformSettings;
  log: SyncLog;
  onQueued?: (() => void) | undefined;
  /** How often the schedule starts a pass of each store (SVC_SYNC_INTERVAL_HOURS; 0: no schedule). */
  scheduleMs?: number;
  /** Stops the runs in hand of the store's jobs that `which` picks (JobRunner.stopStore). */
  stopRuns?: (storeId: string, why: string, which: (job: JobRow) => boolean) => Promise<number>;
}

/** The queue job that runs a store's pass of one kind, a page per step. */
export const syncJobKind = (kind: SyncKind) => `catalog-sync.${kind}`;
const SYNC_JOB_KINDS = new Set<string>(SYNC_KINDS.map(syncJobKind));
/** Whether a job kind is a step of a sync pass. */
export const isSyncJob = (kind: string): boolean => SYNC_JOB_KINDS.has(kind);

/** The longest the schedule waits after passes that failed in a row (a week), unless its interval is longer. */
export const MAX_SCHEDULE_BACKOFF_MS = 7 * 24 * 3_600_000;

/**
 * How long after the latest pass started the schedule starts the next: its interval, doubled for
 * each pass in a row that failed, up to a week (or the interval, when that is longer).
 */
export function scheduleWaitMs(intervalMs: number, failedPasses: number): number {
  return Math.min(intervalMs * 2 ** Math.min(failedPasses, 30), Math.max(intervalMs, MAX_SCHEDULE_BACKOFF_MS));
}

/** A manual pass refused while the operator has paused the store's sync. */
const pausedError = (storeId: string) =>
  new ApiError(409, 'sync_paused', `the catalogue sync of store ${storeId} is paused: resume it first (POST /api/v1/admin/stores/${storeId}/sync/resume, svc stores sync-resume ${storeId})`);

/**
 * Most items written per transaction: a page is applied in short transactions (inBatches sizes them
 * to the step budget: an item's cost varies with its variants) with a turn of the event loop between.
 */
const MAX_WRITE_BATCH = 100;
/** Most items the sweep after a pass looks at per transaction (inBatches sizes its steps to the step budget). */
const SWEEP_MAX_ROWS = 500;
/** Items the sweep looks at per job run: then the job is queued again, so other jobs get their turn and a shutdown does not wait for a whole catalogue. */
const SWEEP_ROWS_PER_RUN = 5000;
/** Unlisted items confirmed with the platform (a request each) per job run, for the same reason. */
const CONFIRMS_PER_RUN = 25;

const NO_API_ACCESS = "a store connected through svc's app gives svc no API access: its catalogue fills from webhooks only";

/** The lowest and highest id among a page's items (ids are decimal strings of any length), or null when none has one. */
function idSpanOf(items: unknown[], key: (item: unknown) => string | null): { low: bigint; high: bigint } | null {
  let span: { low: bigint; high: bigint } | null = null;
  for (const item of items) {
    const id = key(item);
    if (id === null) continue;
    const n = BigInt(id);
    span = span === null ? { low: n, high: n } : { low: n < span.low ? n : span.low, high: n > span.high ? n : span.high };
  }
  return span;
}

const spanText = (span: { low: bigint; high: bigint } | null): string | null => (span === null ? null : `${span.low}:${span.high}`);

/**
 * Why a page that says more follow cannot be a step forward, or null when it can: the same cursor
 * again, no item to stand on, or (for a list in id order) no id beyond the page before's (a cycle
 * of cursors comes back to ids already read); an unordered list must not answer the page before
 * again. A last page (no next) cannot loop and is never refused.
 */
function notAdvancing(row: CatalogSyncRow, page: CatalogPage<unknown>, source: SyncSource<unknown>): string | null {
  if (page.next === null) return null;
  if (page.next === row.cursor) return 'the platform gave the same next-page cursor again: the pass cannot advance';
  const span = idSpanOf(page.items, source.key);
  if (span === null) return 'the platform answered a page without items that says more follow: the pass cannot advance';
  if (row.pageSpan === null) return null;
  const [low, high] = row.pageSpan.split(':').map(BigInt) as [bigint, bigint];
  if (source.ordered && span.high <= high) return `the platform's page ends at id ${span.high}, not beyond the page before (${high}): the pass does not advance`;
  if (!source.ordered && span.low === low && span.high === high) return 'the platform answered the page before again: the pass does not advance';
  return null;
}

/** What a pass of one kind reads (its source) and how the catalogue takes it. */
interface KindSync<T> {
  source: SyncSource<T>;
  /** Write mapped items listed by the pass that started at `passStartedAt` (inside the batch's transaction). */
  write(items: T[], passStartedAt: number): void;
  /** A step of the sweep after a complete pass: the next `limit` items after `after` in id order, and which of them it did not list (nor was anything written since it started). */
  unlistedAfter(passStartedAt: number, after: string, limit: number): UnlistedChunk;
  /** Remove what the platform no longer has; returns how many were removed. */
  remove(ids: string[]): number;
}

/**
 * Catalogue sync: reads every product, category and content page of a store through its
 * platform's API, one page per job step, one job per kind. Products are applied through the
 * catalogue's ordering rule (the platform's modification time wins, tombstones hold), so a page
 * read before a webhook arrived never overwrites what the webhook applied and never brings back a
 * product a webhook deleted. The next page's position is committed with the page, so a pass
 * survives restarts without applying a page twice.
 */
export function createCatalogSync({ database, clock, stores, catalog, queue, settings, log, onQueued, scheduleMs = 0, stopRuns }: SyncDeps) {
  const state = createSyncState(database.db, clock);
  // Written inside the batches' transactions, as `catalog`.
  const entries = createCatalogEntries(sqliteCatalogEntryRecordsSync(database), clock);

  const retry = settings.retry ?? DEFAULT_RETRY;

  function kindSync(kind: SyncKind, store: StoreRow, signal: AbortSignal): KindSync<unknown> | null {
    const credentials = stores.credentialsOf(store);
    if (kind === 'products') {
      const source = productSource(store, credentials, settings, signal);
      return source && {
        source,
        write(products: ProductData[], passStartedAt) {
          for (const product of products) catalog.upsert(store.id, store.currency, product);
          catalog.markListed(store.id, products.map((product) => product.productId), passStartedAt);
        },
        unlistedAfter: (passStartedAt, after, limit) => catalog.unlistedAfter(store.id, passStartedAt, after, limit),
        remove(productIds) {
          const now = clock.now();
          return productIds.filter((productId) => catalog.remove(store.id, productId, now, true) === 'removed').length;
        },
      } as KindSync<ProductData> as KindSync<unknown>;
    }
    const type = ENTRY_TYPE_OF[kind];
    const source = entrySource(type, store, credentials, settings, signal);
    return source && {
      source,
      write: (items: EntryData[], passStartedAt) => entries.upsert(store.id, type, items, passStartedAt),
      unlistedAfter: (passStartedAt, after, limit) => entries.unlistedAfter(store.id, type, passStartedAt, after, limit),
      remove: (ids) => entries.remove(store.id, type, ids),
    } as KindSync<EntryData> as KindSync<unknown>;
  }

  // Paused while the WAL checkpointer catches up with the log (lib/write-pause.ts).
  const writes = writePause(database.sqlite);
  /** A page's items (already read), applied; false when the pass was superseded meanwhile (nothing of the batch is written). */
  const applyBatch = writeTransaction(database.sqlite, (row: CatalogSyncRow, sync: KindSync<unknown>, items: unknown[], readAt: number, end: CatalogPage<unknown> | null): boolean => {
    if (!state.isCurrent(row.storeId, row.kind, row.runId)) return false;
    const mapped: unknown[] = [];
    for (const item of items) {
      try {
        mapped.push(sync.source.map(item, readAt));
      } catch (error) {
        if (error instanceof ApiError) continue; // an item without an id: nothing to key it by
        throw error;
      }
    }
    sync.write(mapped, row.startedAt);
    if (end) state.advance(row, end.next, end.items.length, spanText(idSpanOf(end.items, sync.source.key)));
    return true;
  });

  /** Inside a transaction: `gone` removed and the sweep's position saved (null: the pass is complete); false when the pass was superseded meanwhile. */
  function sweptThrough(row: CatalogSyncRow, sync: KindSync<unknown>, gone: string[], through: string | null): boolean {
    if (!state.isCurrent(row.storeId, row.kind, row.runId)) return false;
    state.swept(row, through, sync.remove(gone));
    return true;
  }
  const applySweep = writeTransaction(database.sqlite, sweptThrough);

  /**
   * A step of the sweep: the next `rows` items after `after`. Where unlisted means gone (no
   * confirmation), those are removed and the position saved in the same transaction as the look, so
   * nothing a webhook wrote meanwhile is removed; where each must be confirmed, a chunk with
   * unlisted items comes back unapplied. Null when the pass was superseded.
   */
  const sweepBatch = writeTransaction(database.sqlite, (row: CatalogSyncRow, sync: KindSync<unknown>, after: string, rows: number): UnlistedChunk | null => {
    const chunk = sync.unlistedAfter(row.startedAt, after, rows);
    if (sync.source.confirmGone && chunk.unlisted.length > 0) return state.isCurrent(row.storeId, row.kind, row.runId) ? chunk : null;
    return sweptThrough(row, sync, chunk.unlisted, chunk.through) ? chunk : null;
  });

  /**
   * One job step of the sweep after the last page: what the complete pass did not list is removed,
   * in short transactions through the catalogue's ids in order (never all of them in memory), from
   * the saved position. Where pages may shift (B, C), an unlisted item is removed only once the
   * platform answers 404 for it, and a failed confirmation ends the sweep (what is left waits for
   * the next pass; the pass itself is complete).
   */
  async function sweep(row: CatalogSyncRow, sync: KindSync<unknown>): Promise<void | JobContinuation> {
    let after = row.sweptThrough!;
    let looked = 0;
    let chunk = null as UnlistedChunk | null;
    await inBatches((rows) => {
      chunk = sweepBatch(row, sync, after, rows);
      if (!chunk || chunk.through === null || (sync.source.confirmGone && chunk.unlisted.length > 0)) return 0;
      after = chunk.through;
      looked += rows;
      return looked < SWEEP_ROWS_PER_RUN ? rows : 0;
    }, SWEEP_MAX_ROWS, undefined, { pause: writes });
    if (!chunk) return { runAgainAt: clock.now() };
    let { through } = chunk;
    if (sync.source.confirmGone && chunk.unlisted.length > 0) {
      const confirming = chunk.unlisted.slice(0, CONFIRMS_PER_RUN);
      let failed = false;
      for (const id of confirming) {
        const gone = await sync.source.confirmGone(id).catch((error) => {
          if (error instanceof Stopped) throw error;
          return null;
        });
        failed = gone === null;
        if (failed) break;
        if (!applySweep(row, sync, gone ? [id] : [], id)) return { runAgainAt: clock.now() };
      }
      if (failed) through = null;
      // More to confirm: the next run goes on after the last one confirmed.
      else if (confirming.length < chunk.unlisted.length) return { runAgainAt: clock.now() };
      if (!applySweep(row, sync, [], through)) return { runAgainAt: clock.now() };
    }
    if (through !== null) return { runAgainAt: clock.now() };
    finished(row, 'completed');
  }

  function finished(row: CatalogSyncRow, outcome: 'completed' | 'failed', extra: Record<string, unknown> = {}): void {
    const now = state.get(row.storeId, row.kind);
    log(outcome === 'completed' ? 'info' : 'warn', `catalog sync ${outcome}`, {
      store: row.storeId,
      kind: row.kind,
      trigger: row.trigger,
      pages: now?.pages ?? row.pages,
      items: now?.items ?? row.items,
      ...(outcome === 'completed' ? { removed: now?.removed ?? 0 } : {}),
      ms: clock.now() - row.startedAt,
      ...extra,
    });
  }

  function fail(row: CatalogSyncRow, reason: string): void {
    state.fail(row, reason);
    finished(row, 'failed', { error: reason });
  }

  /**
   * One step of a pass of `kind`: read the page at the saved position, apply it, and say when the
   * next is due. A page the platform's rate limit holds back is asked again when it says (or, when
   * it says nothing, with backoff), each refusal counted like a failure: a platform that refuses
   * every call ends the pass after the job's attempts. A broken answer (too large, more items than
   * asked for, a page that does not advance) ends the pass at once. A shutdown leaves it as it is.
   */
  const step = (kind: SyncKind) => async (job: JobRow, signal: AbortSignal): Promise<void | JobContinuation> => {
    const row = state.get(job.storeId, kind);
    if (!row || row.status !== 'running') return;
    const store = stores.get(job.storeId);
    if (!store || store.status !== 'active') return fail(row, 'the store is inactive (uninstalled)');
    const sync = kindSync(kind, store, signal);
    if (!sync) return fail(row, NO_API_ACCESS);
    if (row.sweptThrough !== null) return sweep(row, sync);

    let page: CatalogPage<unknown>;
    try {
      page = await sync.source.page(row.cursor);
    } catch (error) {
      if (error instanceof Stopped) throw error;
      if (error instanceof PlatformThrottled && !error.refused) return { runAgainAt: clock.now() + (error.waitMs ?? retry.baseMs), again: 'wait' };
      const reason = (error as Error).message ?? String(error);
      if (error instanceof PlatformProtocolError) return fail(row, reason);
      if (error instanceof PlatformThrottled) {
        if (job.attempts >= queue.maxAttempts) return fail(row, `the platform refused ${job.attempts} calls in a row for its rate limit (${reason})`);
        return { runAgainAt: clock.now() + (error.waitMs ?? backoffMs(job.attempts, retry.baseMs, retry.maxMs)), again: 'attempt' };
      }
      if (job.attempts >= queue.maxAttempts) fail(row, reason);
      else state.noteError(row, reason);
      throw error;
    }
    const stalled = notAdvancing(row, page, sync.source);
    if (stalled) return fail(row, stalled);

    const readAt = clock.now();
    let applied = 0;
    let done = false;
    let superseded = false;
    await inBatches((rows) => {
      if (done) return 0;
      const items = page.items.slice(applied, applied + rows);
      applied += items.length;
      done = applied >= page.items.length;
      superseded = !applyBatch(row, sync, items, readAt, done ? page : null);
      return superseded ? 0 : items.length;
    }, MAX_WRITE_BATCH, undefined, { pause: writes });
    if (superseded) return { runAgainAt: clock.now() };
    // After the last page, the sweep follows in steps of its own.
    return { runAgainAt: clock.now() + page.waitMs };
  };

  /**
   * Every kind's pass begun and its job queued in one transaction: one commit in the turn of the
   * request that started them. While the store's sync is paused the passes are begun but no job is
   * queued: they start when it is resumed.
   */
  const beginPasses = writeTransaction(database.sqlite, (storeId: string, trigger: SyncTrigger, viaApp: boolean, paused: boolean) => {
    for (const kind of SYNC_KINDS) {
      state.begin(storeId, kind, newId(), trigger);
      if (viaApp) fail(state.get(storeId, kind)!, NO_API_ACCESS);
      else if (!paused) queue.enqueueOnce(syncJobKind(kind), storeId, {});
    }
  });

  /** Paused: the store's sync jobs dropped in the same transaction (a run in hand is stopped after it). */
  const pauseTransaction = writeTransaction(database.sqlite, (storeId: string): StoreRow | null => {
    const row = stores.setSyncPaused(storeId, true);
    if (row) queue.dropUnfinished(storeId, isSyncJob);
    return row;
  });

  /** Resumed: the job of each kind whose pass was under way queued again, to go on from its saved position. */
  const resumeTransaction = writeTransaction(database.sqlite, (storeId: string): StoreRow | null => {
    const row = stores.setSyncPaused(storeId, false);
    if (!row) return null;
    for (const pass of state.of(storeId)) if (pass.status === 'running') queue.enqueueOnce(syncJobKind(pass.kind), storeId, {});
    return row;
  });

  /** When the schedule starts the store's next pass: null without a schedule, while one runs or is paused, or for a store it does not sync. */
  function nextScheduledAt(store: StoreRow, passes: CatalogSyncRow[]): number | null {
    if (scheduleMs <= 0 || store.status !== 'active' || store.credentialKind === 'via-app' || store.syncPausedAt !== null) return null;
    if (passes.length === 0 || passes.some((pass) => pass.status === 'running')) return null;
    return Math.max(...passes.map((pass) => pass.startedAt)) + scheduleWaitMs(scheduleMs, failedPassesOf(passes));
  }

  const handlers: Record<string, JobHandler> = Object.fromEntries(SYNC_KINDS.map((kind) => [syncJobKind(kind), step(kind)]));

  return {
    handlers,

    /**
     * Start a pass of every kind from the first page (a running pass starts over: new credentials may
     * name another shop). Stores whose platform list svc does not read are left alone.
     */
    start(storeId: string, trigger: SyncTrigger): void {
      const store = stores.get(storeId);
      if (!store || store.status !== 'active') return;
      const credentials = stores.credentialsOf(store);
      if (credentials.kind !== 'via-app' && !apiTargetOf(store, credentials, settings)) return;
      beginPasses(storeId, trigger, credentials.kind === 'via-app', store.syncPausedAt !== null);
      onQueued?.();
    },

    /** The store's sync state, with its pause, the page being retried and the next scheduled pass. */
    view(storeId: string): SyncView {
      const store = stores.get(storeId);
      const passes = state.of(storeId);
      const waiting = queue.nextRetry(storeId, isSyncJob);
      return toSyncView(passes, {
        pausedAt: store?.syncPausedAt ?? null,
        retry: waiting && store?.syncPausedAt == null ? { failedAttempts: waiting.attempts, maxAttempts: queue.maxAttempts, nextAttemptAt: waiting.runAt } : null,
        nextScheduledAt: store ? nextScheduledAt(store, passes) : null,
      });
    },

    /**
     * A manual pass (`POST .../sync`, `svc stores sync`): started unless one is already under way (a
     * pass waiting for its next attempt is left to wait: this never asks a failing platform sooner).
     * 409 `sync_paused` while the operator has paused the store's sync.
     */
    request(storeId: string): void {
      if (stores.get(storeId)?.syncPausedAt != null) throw pausedError(storeId);
      if (!state.running(storeId)) this.start(storeId, 'manual');
    },

    /**
     * Pause the store's sync: its sync jobs are dropped and a step in hand is stopped (resolves once
     * it has ended); a pass under way keeps its position. Null for an unknown store.
     */
    async pause(storeId: string): Promise<StoreRow | null> {
      const row = pauseTransaction(storeId);
      if (row) await stopRuns?.(storeId, "the store's sync was paused", (job) => isSyncJob(job.kind));
      return row;
    },

    /** Resume the store's sync: a pass that was under way goes on from where it stopped. Null for an unknown store. */
    resume(storeId: string): StoreRow | null {
      const row = resumeTransaction(storeId);
      if (row) onQueued?.();
      return row;
    },

    /** The store's passes under way end as failed with `reason` (a disconnect or removal; its jobs are dropped by the caller). */
    stopRunning: (storeId: string, reason: string): void => state.stopRunning(storeId, reason),

    /**
     * Scheduled reconciliation: a pass for every active store with API access whose sync is not
     * paused, that is not running, and whose latest pass started at least `intervalMs` ago (twice
     * that after a failed pass, four times after two in a row ... up to a week: scheduleWaitMs), or
     * that never had one. Returns how many started.
     */
    reconcileDue(intervalMs: number = scheduleMs): number {
      let started = 0;
      for (const store of stores.list()) {
        if (store.status !== 'active' || store.credentialKind === 'via-app' || store.syncPausedAt !== null || state.running(store.id)) continue;
        const passes = state.of(store.id);
        const latest = Math.max(0, ...passes.map((row) => row.startedAt));
        if (clock.now() - latest < scheduleWaitMs(intervalMs, failedPassesOf(passes))) continue;
        this.start(store.id, 'schedule');
        started++;
      }
      return started;
    },
  };
}

export type CatalogSync = ReturnType<typeof createCatalogSync>;
