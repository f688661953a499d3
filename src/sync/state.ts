import { SYNC_KINDS, type SyncKind, type SyncTrigger } from './types.ts';
import { isoOrNull } from '../lib/time.ts';

/**
 * The latest catalogue sync pass of a store, one per kind. The position of the next page
 * (`cursor`) is committed in the same transaction as the page before it, so a pass resumes where it
 * stopped after a crash or restart and never applies a page twice (and the sweep after the last
 * page, `sweptThrough`, goes on from the last id it went through); `runId` ties the pass to its
 * queued job, so a pass superseded by a newer trigger stops at its next page.
 */
export interface SyncPass {
  storeId: string;
  kind: SyncKind;
  runId: string;
  trigger: SyncTrigger;
  status: 'running' | 'done' | 'failed';
  /** The platform's cursor (platform A) or page number of the next page; null: the first page. */
  cursor: string | null;
  /**
   * The lowest and highest item id of the page before (`low:high`): the next page must reach
   * beyond it (a list in id order) or differ from it, or the pass is not advancing. Null before
   * the first page.
   */
  pageSpan: string | null;
  pages: number;
  /** Items read from the platform in this pass (applied or older than what svc holds). */
  items: number;
  /** After the last page, the sweep for what the pass did not list, in steps: the last id it has gone through ('' when it has just begun). Null while pages are being read. */
  sweptThrough: string | null;
  /** Items the sweep has removed (the platform no longer has them). */
  removed: number;
  /** Failed: why. Running: the last error, being retried with backoff. */
  error: string | null;
  startedAt: number;
  finishedAt: number | null;
  /** When a pass of this kind last went through every page (kept across later passes). */
  lastCompletedAt: number | null;
  /** Passes of this kind that failed in a row (kept across later passes, 0 once one completes): the schedule waits longer after each. */
  failedPasses: number;
}

/** Which pass a write is for: a write for a pass no longer running (superseded, stopped) writes nothing. */
export type PassRef = Pick<SyncPass, 'storeId' | 'kind' | 'runId'>;

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

const kindState = (row: SyncPass | undefined, paused: boolean): SyncState =>
  row?.status === 'running' ? (paused ? 'paused' : 'running') : row?.status === 'failed' ? 'failed' : 'idle';

/** Passes of the store that failed in a row: the most of any kind. */
export const failedPassesOf = (rows: SyncPass[]): number => Math.max(0, ...rows.map((row) => row.failedPasses));

export function toSyncView(rows: SyncPass[], circumstances: SyncCircumstances = { pausedAt: null, retry: null, nextScheduledAt: null }): SyncView {
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
  const latest = rows.reduce<SyncPass | null>((a, row) => (a === null || row.startedAt > a.startedAt ? row : a), null);
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
