import { entryRows } from '../catalog/entries.ts';
import type { Catalog } from '../catalog/products.ts';
import type { UnlistedChunk } from '../catalog/sweep.ts';
import { SYNC_KINDS, type SyncKind, type SyncTrigger } from './types.ts';
import type { Clock } from '../lib/clock.ts';
import { Stopped } from '../lib/abort.ts';
import { backoffMs } from '../lib/backoff.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { inBatches } from '../lib/periodic.ts';
import type { WritePause } from '../lib/write-pause.ts';
import { apiTargetOf, type PlatformSettings } from '../platforms/clients.ts';
import { DEFAULT_RETRY, PlatformProtocolError, PlatformThrottled } from '../platforms/http.ts';
import type { CatalogPage } from '../platforms/types.ts';
import type { EntryData } from '../catalog/entry-data.ts';
import type { ProductData } from '../catalog/product-data.ts';
import type { PageWrite, SweepTarget, SyncStateRecords } from '../storage/stores.ts';
import { CONNECT_JOB } from '../stores/connect.ts';
import type { StoreRecord, StoreRegistry } from '../stores/registry.ts';
import type { Job, JobContinuation, JobHandler, JobQueue } from '../webhooks/queue.ts';
import { ENTRY_TYPE_OF, entrySource, productSource, type SyncSource } from './sources.ts';
import { failedPassesOf, toSyncView, type SyncPass, type SyncView } from './state.ts';

export type SyncLog = (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;

interface SyncDeps {
  /** The passes, and each step's writes with its bookkeeping in one transaction. */
  records: SyncStateRecords;
  stores: StoreRegistry;
  /** Prepares the products a page writes. */
  catalog: Pick<Catalog, 'prepare'>;
  queue: Pick<JobQueue, 'maxAttempts' | 'nextRetry' | 'hasUnfinished'>;
  /** The engine's pause of writes that can wait (SQLite: while the WAL checkpointer catches up with the log, lib/write-pause.ts); none elsewhere. */
  writes?: Pick<WritePause, 'paused' | 'afterPause'> | undefined;
  clock: Clock;
  settings: PlatformSettings;
  log: SyncLog;
  onQueued?: (() => void) | undefined;
  /** How often the schedule starts a pass of each store (SVC_SYNC_INTERVAL_HOURS; 0: no schedule). */
  scheduleMs?: number;
  /** Stops the runs in hand of the store's jobs that `which` picks (JobRunner.stopStore). */
  stopRuns?: (storeId: string, why: string, which: (job: Job) => boolean) => Promise<number>;
}

/** The queue job that runs a store's pass of one kind, a page per step. */
export const syncJobKind = (kind: SyncKind) => `catalog-sync.${kind}`;
const SYNC_JOB_KINDS = SYNC_KINDS.map(syncJobKind);
const JOB_KIND_OF = Object.fromEntries(SYNC_KINDS.map((kind) => [kind, syncJobKind(kind)])) as Record<SyncKind, string>;
/** Whether a job kind is a step of a sync pass. */
export const isSyncJob = (kind: string): boolean => SYNC_JOB_KINDS.includes(kind);

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
function notAdvancing(row: SyncPass, page: CatalogPage<unknown>, source: SyncSource<unknown>): string | null {
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
  /** Mapped items as the pass that started at `passStartedAt` writes them at `at` (inside the batch's transaction). */
  write(items: T[], passStartedAt: number, at: number): PageWrite;
  /** What its sweep after a complete pass removes. */
  target: SweepTarget;
}

/**
 * Catalogue sync: reads every product, category and content page of a store through its
 * platform's API, one page per job step, one job per kind. Products are applied through the
 * catalogue's ordering rule (the platform's modification time wins, tombstones hold), so a page
 * read before a webhook arrived never overwrites what the webhook applied and never brings back a
 * product a webhook deleted. The next page's position is committed with the page, so a pass
 * survives restarts without applying a page twice.
 */
export function createCatalogSync({ records, clock, stores, catalog, queue, writes, settings, log, onQueued, scheduleMs = 0, stopRuns }: SyncDeps) {
  const retry = settings.retry ?? DEFAULT_RETRY;

  function kindSync(kind: SyncKind, store: StoreRecord, signal: AbortSignal): KindSync<unknown> | null {
    const credentials = stores.credentialsOf(store);
    if (kind === 'products') {
      const source = productSource(store, credentials, settings, signal);
      return source && ({
        source,
        write: (products: ProductData[]) => ({ kind: 'products', currency: store.currency, products: products.map((product) => catalog.prepare(store.id, product)) }),
        target: { kind: 'products' },
      } satisfies KindSync<ProductData> as KindSync<unknown>);
    }
    const type = ENTRY_TYPE_OF[kind];
    const source = entrySource(type, store, credentials, settings, signal);
    return source && ({
      source,
      write: (items: EntryData[], passStartedAt, at) => ({ kind: 'entries', entries: entryRows(store.id, type, items, passStartedAt, at) }),
      target: { kind: 'entries', type },
    } satisfies KindSync<EntryData> as KindSync<unknown>);
  }

  /**
   * A page's items (already read), applied with the pass's position when `end` (its last batch), in
   * one transaction; false when the pass was superseded meanwhile (nothing of the batch is written).
   */
  function applyBatch(row: SyncPass, sync: KindSync<unknown>, items: unknown[], readAt: number, end: CatalogPage<unknown> | null): Promise<boolean> {
    const mapped: unknown[] = [];
    for (const item of items) {
      try {
        mapped.push(sync.source.map(item, readAt));
      } catch (error) {
        if (error instanceof ApiError) continue; // an item without an id: nothing to key it by
        throw error;
      }
    }
    const now = clock.now();
    const advance = end && { next: end.next, items: end.items.length, pageSpan: spanText(idSpanOf(end.items, sync.source.key)) };
    return records.applyPage(row, row.startedAt, sync.write(mapped, row.startedAt, now), advance, now);
  }

  /**
   * One job step of the sweep after the last page: what the complete pass did not list is removed,
   * in short transactions through the catalogue's ids in order (never all of them in memory), from
   * the saved position; where unlisted means gone (no confirmation), those are removed and the
   * position saved in the same transaction as the look, so nothing a webhook wrote meanwhile is
   * removed. Where pages may shift (B, C), an unlisted item is removed only once the platform
   * answers 404 for it, and a failed confirmation ends the sweep (what is left waits for the next
   * pass; the pass itself is complete).
   */
  async function sweep(row: SyncPass, sync: KindSync<unknown>): Promise<void | JobContinuation> {
    let after = row.sweptThrough!;
    let looked = 0;
    let chunk = null as UnlistedChunk | null;
    const confirming = sync.source.confirmGone !== undefined;
    await inBatches(async (rows) => {
      chunk = await records.sweepStep(row, row.startedAt, sync.target, after, rows, !confirming, clock.now());
      if (!chunk || chunk.through === null || (confirming && chunk.unlisted.length > 0)) return 0;
      after = chunk.through;
      looked += rows;
      return looked < SWEEP_ROWS_PER_RUN ? rows : 0;
    }, SWEEP_MAX_ROWS, undefined, { pause: writes });
    if (!chunk) return { runAgainAt: clock.now() };
    let { through } = chunk;
    if (sync.source.confirmGone && chunk.unlisted.length > 0) {
      const confirmed = chunk.unlisted.slice(0, CONFIRMS_PER_RUN);
      let failed = false;
      for (const id of confirmed) {
        const gone = await sync.source.confirmGone(id).catch((error) => {
          if (error instanceof Stopped) throw error;
          return null;
        });
        failed = gone === null;
        if (failed) break;
        if (!(await records.sweptThrough(row, sync.target, gone ? [id] : [], id, clock.now()))) return { runAgainAt: clock.now() };
      }
      if (failed) through = null;
      // More to confirm: the next run goes on after the last one confirmed.
      else if (confirmed.length < chunk.unlisted.length) return { runAgainAt: clock.now() };
      if (!(await records.sweptThrough(row, sync.target, [], through, clock.now()))) return { runAgainAt: clock.now() };
    }
    if (through !== null) return { runAgainAt: clock.now() };
    await finished(row, 'completed');
  }

  async function finished(row: SyncPass, outcome: 'completed' | 'failed', extra: Record<string, unknown> = {}): Promise<void> {
    const now = await records.get(row.storeId, row.kind);
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

  async function fail(row: SyncPass, reason: string): Promise<void> {
    await records.fail(row, reason, clock.now());
    await finished(row, 'failed', { error: reason });
  }

  /**
   * One step of a pass of `kind`: read the page at the saved position, apply it, and say when the
   * next is due. A page the platform's rate limit holds back is asked again when it says (or, when
   * it says nothing, with backoff), each refusal counted like a failure: a platform that refuses
   * every call ends the pass after the job's attempts. A broken answer (too large, more items than
   * asked for, a page that does not advance) ends the pass at once. A shutdown leaves it as it is.
   */
  const step = (kind: SyncKind) => async (job: Job, signal: AbortSignal): Promise<void | JobContinuation> => {
    const row = await records.get(job.storeId, kind);
    if (!row || row.status !== 'running') return;
    const store = await stores.get(job.storeId);
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
      if (job.attempts >= queue.maxAttempts) await fail(row, reason);
      else await records.noteError(row, reason);
      throw error;
    }
    const stalled = notAdvancing(row, page, sync.source);
    if (stalled) return fail(row, stalled);

    const readAt = clock.now();
    let applied = 0;
    let done = false;
    let superseded = false;
    await inBatches(async (rows) => {
      if (done) return 0;
      const items = page.items.slice(applied, applied + rows);
      applied += items.length;
      done = applied >= page.items.length;
      superseded = !(await applyBatch(row, sync, items, readAt, done ? page : null));
      return superseded ? 0 : items.length;
    }, MAX_WRITE_BATCH, undefined, { pause: writes });
    if (superseded) return { runAgainAt: clock.now() };
    // After the last page, the sweep follows in steps of its own.
    return { runAgainAt: clock.now() + page.waitMs };
  };

  /** When the schedule starts the store's next pass: null without a schedule, while one runs or is paused, or for a store it does not sync. */
  function nextScheduledAt(store: StoreRecord, passes: SyncPass[]): number | null {
    if (scheduleMs <= 0 || store.status !== 'active' || store.credentialKind === 'via-app' || store.syncPausedAt !== null) return null;
    if (passes.length === 0 || passes.some((pass) => pass.status === 'running')) return null;
    return Math.max(...passes.map((pass) => pass.startedAt)) + scheduleWaitMs(scheduleMs, failedPassesOf(passes));
  }

  const handlers: Record<string, JobHandler> = Object.fromEntries(SYNC_KINDS.map((kind) => [syncJobKind(kind), step(kind)]));

  return {
    handlers,

    /**
     * Start a pass of every kind from the first page (a running pass starts over: new credentials may
     * name another shop), each with its job queued, in one transaction. While the store's sync is
     * paused the passes are begun but no job is queued: they start when it is resumed. Stores whose
     * platform list svc does not read are left alone.
     */
    async start(storeId: string, trigger: SyncTrigger): Promise<void> {
      const store = await stores.get(storeId);
      if (!store || store.status !== 'active') return;
      const credentials = stores.credentialsOf(store);
      const viaApp = credentials.kind === 'via-app';
      if (!viaApp && !apiTargetOf(store, credentials, settings)) return;
      const paused = store.syncPausedAt !== null;
      const passes = SYNC_KINDS.map((kind) => ({ kind, runId: newId(), failed: viaApp ? NO_API_ACCESS : null, job: viaApp || paused ? null : syncJobKind(kind) }));
      await records.begin(storeId, trigger, passes, clock.now());
      if (viaApp) {
        for (const kind of SYNC_KINDS) {
          const pass = await records.get(storeId, kind);
          if (pass) await finished(pass, 'failed', { error: NO_API_ACCESS });
        }
      }
      onQueued?.();
    },

    /** The store's sync state, with its pause, the page being retried and the next scheduled pass. */
    async view(storeId: string): Promise<SyncView> {
      const [store, passes, waiting] = await Promise.all([stores.get(storeId), records.of(storeId), queue.nextRetry(storeId, SYNC_JOB_KINDS)]);
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
    async request(storeId: string): Promise<void> {
      if ((await stores.get(storeId))?.syncPausedAt != null) throw pausedError(storeId);
      if (!(await records.running(storeId))) await this.start(storeId, 'manual');
    },

    /**
     * Pause the store's sync: its sync jobs are dropped in the same transaction, and a step in hand
     * is stopped after it (resolves once it has ended); a pass under way keeps its position. Null for
     * an unknown store.
     */
    async pause(storeId: string): Promise<StoreRecord | null> {
      const row = await records.pause(storeId, SYNC_JOB_KINDS, clock.now());
      if (row) await stopRuns?.(storeId, "the store's sync was paused", (job) => isSyncJob(job.kind));
      return row;
    },

    /** Resume the store's sync: the job of each kind whose pass was under way queued again, to go on from where it stopped. Null for an unknown store. */
    async resume(storeId: string): Promise<StoreRecord | null> {
      const row = await records.resume(storeId, JOB_KIND_OF, clock.now());
      if (row) onQueued?.();
      return row;
    },

    /**
     * Scheduled reconciliation: a pass for every active store with API access whose sync is not
     * paused, that is not running, and whose latest pass started at least `intervalMs` ago (twice
     * that after a failed pass, four times after two in a row ... up to a week: scheduleWaitMs), or
     * that never had one. A store whose connection is under way (its job queued or running: hooks,
     * currency) is left to it: the connection starts the import itself once they are in place, and
     * would start over a pass begun before (its first pages read twice).
     * Returns how many started.
     */
    async reconcileDue(intervalMs: number = scheduleMs): Promise<number> {
      let started = 0;
      for (const store of await stores.list()) {
        if (store.status !== 'active' || store.credentialKind === 'via-app' || store.syncPausedAt !== null || (await records.running(store.id))) continue;
        if (await queue.hasUnfinished(store.id, [CONNECT_JOB])) continue;
        const passes = await records.of(store.id);
        const latest = Math.max(0, ...passes.map((row) => row.startedAt));
        if (clock.now() - latest < scheduleWaitMs(intervalMs, failedPassesOf(passes))) continue;
        await this.start(store.id, 'schedule');
        started++;
      }
      return started;
    },
  };
}

export type CatalogSync = ReturnType<typeof createCatalogSync>;
