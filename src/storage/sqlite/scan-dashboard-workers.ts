import { workerCalls, workerEntry } from '../../lib/worker-calls.ts';
import type { DashboardQueries } from '../scans.ts';
import type { DashboardRead } from './scan-dashboard-worker.ts';

/**
 * Workers answering the dashboard's reads. Two: a long read (a year of stats by day, some tens of
 * ms) does not hold the console's other reads behind it. No more: each holds a connection with its
 * page cache, and the request thread and the roller need the machine's other cores.
 */
export const DASHBOARD_WORKERS = 2;

type Calls = ReturnType<typeof workerCalls>;

/**
 * The dashboard's reads (scan-dashboard.ts createDashboardReader), run in Workers of their own:
 * merging rollup sketches and reading raw rows costs tens of ms of CPU for a long range, which on the
 * request thread would hold every request behind it (telemetry included), and the reads of a busy
 * ingest would wait behind telemetry in turn. Each Worker opens its own query-only connection to
 * `databaseFile` (whose rollups file must be ready: AppDatabase.stats()). Workers start at the first
 * read, never hold the process open, and a Worker that fails is replaced by the next read.
 */
export function createDashboardQueries(databaseFile: string, size = DASHBOARD_WORKERS): DashboardQueries {
  const workers: (Calls | null)[] = Array.from({ length: size }, () => null);
  let closed = false;
  const spawn = (): Calls => {
    const calls = workerCalls(new Worker(workerEntry('storage/sqlite/scan-dashboard-worker.ts'), { ref: false }), 'dashboard reader');
    // Its first read waits behind this in the Worker's queue; a failed open fails that read.
    calls.call({ op: 'open', file: databaseFile }).catch(() => {});
    return calls;
  };
  /** An idle Worker, else a new one while there is room, else the least busy. */
  const pick = (): Calls => {
    let chosen = 0;
    let least = Infinity;
    for (let i = 0; i < workers.length; i++) {
      if (workers[i]?.failed()) workers[i] = null;
      const load = workers[i]?.pending() ?? 0.5;
      if (load < least) [chosen, least] = [i, load];
    }
    return (workers[chosen] ??= spawn());
  };
  const read =
    (op: DashboardRead) =>
    (...args: unknown[]): Promise<never> =>
      closed ? Promise.reject(new Error('dashboard reader: closed')) : pick().call({ op, args });
  return {
    list: read('list'),
    topHostnames: read('topHostnames'),
    get: read('get'),
    stats: read('stats'),
    async close() {
      closed = true;
      await Promise.all(
        workers.map(async (calls) => {
          // Queued behind the reads given before it, so those are still answered.
          await calls?.call({ op: 'close' }).catch(() => null);
          calls?.terminate('closed');
        }),
      );
    },
  };
}
