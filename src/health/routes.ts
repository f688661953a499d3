import type { Database } from 'bun:sqlite';
import { Elysia } from 'elysia';
import { buildInfo } from '../lib/build-info.ts';
import type { Clock } from '../lib/clock.ts';
import { errorResponse } from '../lib/errors.ts';

/** How often a health check may write its probe row; in between, the last attempt's result stands. */
export const WRITE_PROBE_INTERVAL_MS = 5_000;

/**
 * Whether the database takes writes, by rewriting one row at most every WRITE_PROBE_INTERVAL_MS:
 * a flood of health checks costs one tiny write per interval, not one each. Null when the last
 * attempt committed, else its error message.
 */
function writeProbe(sqlite: Database, clock: Clock): () => string | null {
  const write = sqlite.prepare('INSERT INTO health_probe (id, written_at) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET written_at = ?1');
  let probedAt = -Infinity;
  let failure: string | null = null;
  return () => {
    const now = clock.now();
    if (now - probedAt < WRITE_PROBE_INTERVAL_MS) return failure;
    probedAt = now;
    try {
      write.run(now);
      failure = null;
    } catch (error) {
      failure = (error as Error).message;
    }
    return failure;
  };
}

/**
 * GET /healthz: the process is up and the database answers a query (else 503 `database_unavailable`)
 * and takes writes (else 503 with status `degraded`: svc still serves reads, but would refuse scans
 * and deliveries). Every answer names the build.
 */
export function healthRoutes(sqlite: Database, clock: Clock) {
  const ping = sqlite.prepare('SELECT 1 AS ok');
  const writeFailure = writeProbe(sqlite, clock);
  return new Elysia().get('/healthz', () => {
    try {
      ping.get();
    } catch (error) {
      return errorResponse(503, 'database_unavailable', `the database did not answer: ${(error as Error).message}`, {}, { ...buildInfo() });
    }
    const failure = writeFailure();
    if (failure !== null) {
      return errorResponse(503, 'database_not_writable', `the database answers but does not take writes: ${failure}`, {}, { status: 'degraded', ...buildInfo() });
    }
    return { status: 'ok', ...buildInfo() };
  });
}
