import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { catalogSyncs, type CatalogSyncRow } from '../db/schema/index.ts';
import { SYNC_KINDS, type SyncKind, type SyncTrigger } from './types.ts';
import type { Clock } from '../lib/clock.ts';
import { isoOrNull } from '../lib/time.ts';

export type SyncState = 'idle' | 'running' | 'paused' | 'failed';

/** One kind's progress in the store's latest pass. */
export interface SyncKindView {
  state: SyncState;
  pages: number;
  items: number;
  error: string | null;
  lastCompletedAt: string | null;
}

/** A page being retried after failed attempts: how many failed, of how many it gets, and when the next is due. */
export interface SyncRetry {
  failedAttempts: number;
  maxAttempts: number;
  nextAttemptAt: string;
}

/**
 * A store's catalogue sync as the admin API shows it: `paused` while the operator has paused it
 * (nothing runs; a pass under way goes on from where it stopped once resumed), else `running` while
 * any kind is, else `failed` when any kind gave up (with its reason), else `idle`.
 * `lastCompletedAt` is when every kind last went through all its pages (null until then); `error` is
 * a failed kind's reason, or while running the last error being retried, with `retry` saying when.
 * `failedPasses` counts the passes in a row that failed, and `nextScheduledAt` is when the schedule
 * starts the next pass (null while one runs, while paused, or without a schedule).
 */
export interface SyncView {
  state: SyncState;
  trigger: SyncTrigger | null;
  startedAt: string | null;
  finishedAt: string | null;
  lastCompletedAt: string | null;
  error: string | null;
  retry: SyncRetry | null;
  failedPasses: number;
  nextScheduledAt: string | null;
  pausedAt: string | null;
  kinds: Record<SyncKind, SyncKindView>;
}

/** What the view adds to the pass rows: the store's pause, the page being retried, the schedule. */
export interface SyncCircumstances {
  pausedAt: number | null;
  retry: { failedAttempts: number; maxAttempts: number; nextAttemptAt: number } | null;
  nextScheduledAt: number | null;
}

const kindState = (row: CatalogSyncRow | undefined, paused: boolean): SyncState =>
  row?.status === 'running' ? (paused ? 'paused' : 'running') : row?.status === 'failed' ? 'failed' : 'idle';

/** Passes of the store that failed in a row: the most of any kind. */
export const failedPassesOf = (rows: CatalogSyncRow[]): number => Math.max(0, ...rows.map((row) => row.failedPasses));

export function toSyncView(rows: CatalogSyncRow[], circumstances: SyncCircumstances = { pausedAt: null, retry: null, nextScheduledAt: null }): SyncView {
  const paused = circumstances.pausedAt !== null;
  const byKind = new Map(rows.map((row) => [row.kind, row]));
  const kinds = Object.fromEntries(
    SYNC_KINDS.map((kind) => {
      const row = byKind.get(kind);
      return [kind, { state: kindState(row, paused), pages: row?.pages ?? 0, items: row?.items ?? 0, error: row?.error ?? null, lastCompletedAt: isoOrNull(row?.lastCompletedAt ?? null) }];
    }),
  ) as Record<SyncKind, SyncKindView>;
  const states = SYNC_KINDS.map((kind) => kinds[kind].state);
  const completed = SYNC_KINDS.map((kind) => byKind.get(kind)?.lastCompletedAt ?? null);
  const latest = rows.reduce<CatalogSyncRow | null>((a, row) => (a === null || row.startedAt > a.startedAt ? row : a), null);
  const unfinished = rows.some((row) => row.finishedAt === null);
  const retry = circumstances.retry;
  return {
    state: paused ? 'paused' : states.includes('running') ? 'running' : states.includes('failed') ? 'failed' : 'idle',
    trigger: latest?.trigger ?? null,
    startedAt: isoOrNull(rows.length ? Math.min(...rows.map((row) => row.startedAt)) : null),
    finishedAt: isoOrNull(rows.length && !unfinished ? Math.max(...rows.map((row) => row.finishedAt!)) : null),
    lastCompletedAt: isoOrNull(completed.includes(null) ? null : Math.min(...(completed as number[]))),
    error: rows.find((row) => row.status === 'failed')?.error ?? rows.find((row) => row.error !== null)?.error ?? null,
    retry: retry && { failedAttempts: retry.failedAttempts, maxAttempts: retry.maxAttempts, nextAttemptAt: isoOrNull(retry.nextAttemptAt)! },
    failedPasses: failedPassesOf(rows),
    nextScheduledAt: isoOrNull(circumstances.nextScheduledAt),
    pausedAt: isoOrNull(circumstances.pausedAt),
    kinds,
  };
}

/** The rows of `catalog_syncs`: one pass per store and kind, its position and counts. */
export function createSyncState(db: Db, clock: Clock) {
  const where = (storeId: string, kind: SyncKind) => and(eq(catalogSyncs.storeId, storeId), eq(catalogSyncs.kind, kind));
  const byStoreAndKind = and(eq(catalogSyncs.storeId, sql.placeholder('storeId')), eq(catalogSyncs.kind, sql.placeholder('kind')));
  // Prepared once, like the two below: read at every step of a pass (building and preparing it each time cost more than the read).
  const passRow = db.select().from(catalogSyncs).where(byStoreAndKind).prepare();
  // A pass's start runs in the turn of the request that triggered it: no statement is built there.
  const fresh = { status: 'running' as const, cursor: null, pageSpan: null, pages: 0, items: 0, sweptThrough: null, removed: 0, error: null, finishedAt: null };
  const beginPass = db
    .insert(catalogSyncs)
    .values({ storeId: sql.placeholder('storeId'), kind: sql.placeholder('kind'), runId: sql.placeholder('runId'), trigger: sql.placeholder('trigger'), startedAt: sql.placeholder('startedAt'), ...fresh })
    .onConflictDoUpdate({
      target: [catalogSyncs.storeId, catalogSyncs.kind],
      set: { runId: sql`excluded.run_id`, trigger: sql`excluded.trigger`, startedAt: sql`excluded.started_at`, ...fresh },
    })
    .prepare();
  // Asked before every write batch of a pass.
  const currentRun = db
    .select({ runId: catalogSyncs.runId, status: catalogSyncs.status })
    .from(catalogSyncs)
    .where(byStoreAndKind)
    .prepare();
  return {
    get: (storeId: string, kind: SyncKind): CatalogSyncRow | null => passRow.get({ storeId, kind }) ?? null,
    of: (storeId: string): CatalogSyncRow[] => db.select().from(catalogSyncs).where(eq(catalogSyncs.storeId, storeId)).all(),

    /** A new pass from the first page; it supersedes any pass of this kind still running. */
    begin(storeId: string, kind: SyncKind, runId: string, trigger: SyncTrigger): void {
      beginPass.run({ storeId, kind, runId, trigger, startedAt: clock.now() });
    },

    /** True while `runId` is the running pass of this kind (a newer trigger replaces it). */
    isCurrent(storeId: string, kind: SyncKind, runId: string): boolean {
      const row = currentRun.get({ storeId, kind });
      return row?.runId === runId && row.status === 'running';
    },

    /** Whether a pass of this store is under way. */
    running: (storeId: string): boolean => db.select({ kind: catalogSyncs.kind }).from(catalogSyncs).where(and(eq(catalogSyncs.storeId, storeId), eq(catalogSyncs.status, 'running'))).get() !== undefined,

    /**
     * A page applied: the next page's position, the ids the page spanned (`low:high`, what the next
     * page must advance beyond) and the counts move on (in the page's last transaction). `next` null:
     * the sweep begins.
     */
    advance(row: CatalogSyncRow, next: string | null, items: number, pageSpan: string | null): void {
      db.update(catalogSyncs)
        .set({ cursor: next, pageSpan, pages: sql`${catalogSyncs.pages} + 1`, items: sql`${catalogSyncs.items} + ${items}`, error: null, ...(next === null ? { sweptThrough: '' } : {}) })
        .where(and(where(row.storeId, row.kind), eq(catalogSyncs.runId, row.runId)))
        .run();
    },

    /** A step of the sweep: it went through `through` (null: to the end, which completes the pass) and removed `removed` items. */
    swept(row: CatalogSyncRow, through: string | null, removed: number): void {
      const now = clock.now();
      db.update(catalogSyncs)
        .set({ removed: sql`${catalogSyncs.removed} + ${removed}`, error: null, ...(through === null ? { sweptThrough: null, status: 'done', finishedAt: now, lastCompletedAt: now, failedPasses: 0 } : { sweptThrough: through }) })
        .where(and(where(row.storeId, row.kind), eq(catalogSyncs.runId, row.runId)))
        .run();
    },

    /** The last error of a page being retried (the pass goes on). */
    noteError(row: CatalogSyncRow, error: string): void {
      db.update(catalogSyncs).set({ error }).where(and(where(row.storeId, row.kind), eq(catalogSyncs.runId, row.runId))).run();
    },

    /** The pass gave up (one more failed pass in a row); the catalogue keeps what earlier pages and webhooks brought. */
    fail(row: CatalogSyncRow, error: string): void {
      db.update(catalogSyncs)
        .set({ status: 'failed', error, finishedAt: clock.now(), failedPasses: sql`${catalogSyncs.failedPasses} + 1` })
        .where(and(where(row.storeId, row.kind), eq(catalogSyncs.runId, row.runId)))
        .run();
    },

    /** The operator stopped the store's passes under way (a disconnect): ended as failed with `reason`, not counted as failed passes. */
    stopRunning(storeId: string, reason: string): void {
      db.update(catalogSyncs).set({ status: 'failed', error: reason, finishedAt: clock.now() }).where(and(eq(catalogSyncs.storeId, storeId), eq(catalogSyncs.status, 'running'))).run();
    },
  };
}

export type SyncStateStore = ReturnType<typeof createSyncState>;
