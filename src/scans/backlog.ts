/**
 * The rollup backlog: accepted scans the roller has not folded into the dashboard rollups yet (each
 * engine reads it: ScanReadRecords.backlog). Every stats answer reads them raw, so a large backlog
 * makes the dashboard slow; /metrics, /healthz and the console overview show it.
 */
export interface RollupBacklog {
  /** How many scans wait to be rolled up (an engine may count over, never under: see its backlog read). */
  scans: number;
  /** When the first of them (in the order they were written) was received, ms since the epoch; null when none waits. */
  oldestReceivedAt: number | null;
}

/**
 * When the backlog slows the dashboard enough to say so on the overview (and `slowsDashboard` in
 * the API): more than 10,000 scans, which every stats answer reads one by one (the overview asks for
 * five), or a first scan waiting more than 10 s, when the roller (which runs every second) is not
 * keeping up with ingest and the backlog grows.
 */
export const NOTICEABLE_BACKLOG = { scans: 10_000, seconds: 10 } as const;

/** Seconds the oldest unrolled scan has waited at `now`: 0 when none waits (or the clock was set back before it). */
export function backlogAgeSeconds(backlog: RollupBacklog, now: number): number {
  return backlog.oldestReceivedAt === null ? 0 : Math.max(0, now - backlog.oldestReceivedAt) / 1000;
}

/** Whether the backlog is large or old enough to slow the dashboard (NOTICEABLE_BACKLOG). */
export function backlogSlowsDashboard(backlog: RollupBacklog, now: number): boolean {
  return backlog.scans > NOTICEABLE_BACKLOG.scans || backlogAgeSeconds(backlog, now) > NOTICEABLE_BACKLOG.seconds;
}

/** The backlog as the API and /healthz show it (times in ISO 8601, the age in seconds at `now`). */
export function backlogView(backlog: RollupBacklog, now: number) {
  return {
    scans: backlog.scans,
    oldestReceivedAt: backlog.oldestReceivedAt === null ? null : new Date(backlog.oldestReceivedAt).toISOString(),
    ageSeconds: backlogAgeSeconds(backlog, now),
    slowsDashboard: backlogSlowsDashboard(backlog, now),
  };
}

export type BacklogView = ReturnType<typeof backlogView>;
