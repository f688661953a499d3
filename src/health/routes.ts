import type { Database } from 'bun:sqlite';
import { Elysia } from 'elysia';
import { buildInfo } from '../lib/build-info.ts';
import { errorResponse } from '../lib/errors.ts';

/** GET /healthz: the process is up and the database answers a query; both answers name the build. */
export function healthRoutes(sqlite: Database) {
  const ping = sqlite.prepare('SELECT 1 AS ok');
  return new Elysia().get('/healthz', () => {
    try {
      ping.get();
      return { status: 'ok', ...buildInfo() };
    } catch (error) {
      return errorResponse(503, 'database_unavailable', `the database did not answer: ${(error as Error).message}`, {}, { ...buildInfo() });
    }
  });
}
