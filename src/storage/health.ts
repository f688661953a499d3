import type { Engine } from './index.ts';

/** The job queue's statuses, as /metrics counts them. */
export const JOB_STATUSES = ['queued', 'running', 'done', 'dead'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What an operator watches of the engine (/metrics, /healthz details). */
export type EngineFigures =
  | { engine: 'sqlite'; jobs: Record<JobStatus, number>; databaseBytes: number; walBytes: number }
  | {
      engine: 'postgres';
      jobs: Record<JobStatus, number>;
      /** This instance's connections: at most `max` (SVC_DATABASE_POOL); `open` of them now, `busy` of those running a statement. */
      pool: { max: number; open: number; busy: number };
    };

/** Whether the database answers and takes writes, and its figures. */
export interface DatabaseHealth {
  engine: Engine;
  /** Resolves once the database answers a query; rejects with its error otherwise. */
  ping(): Promise<void>;
  /** Rewrites the one probe row with `now`: resolves once committed, rejects with why not. */
  probeWrite(now: number): Promise<void>;
  figures(): Promise<EngineFigures>;
}

/** Counts by status, every status present (0 when no job has it). */
export function jobCounts(rows: { status: string; n: number }[]): Record<JobStatus, number> {
  const counts = new Map(rows.map((row) => [row.status, Number(row.n)]));
  return Object.fromEntries(JOB_STATUSES.map((status) => [status, counts.get(status) ?? 0])) as Record<JobStatus, number>;
}
