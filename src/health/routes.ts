import type { Database } from 'bun:sqlite';
import { Elysia, t } from 'elysia';
import { buildInfo } from '../lib/build-info.ts';
import { errorResponse } from '../lib/errors.ts';
import { apiDoc, integer } from '../lib/api-doc.ts';

const build = { version: t.String(), commit: t.String(), buildDate: t.Union([t.String({ format: 'date-time' }), t.Null()]), schemaVersion: integer({ description: 'Migrations this build carries' }) };
const healthDoc = apiDoc({
  summary: 'Health and version',
  description: 'Up and the database answers; both answers name the build.',
  tag: 'operations',
  auth: 'public',
  responses: { 200: { description: 'Healthy', schema: t.Object({ status: t.Literal('ok'), ...build }), example: { status: 'ok', version: '0.1.0', commit: 'b8f8063a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f', buildDate: '2026-11-23T10:00:00.000Z', schemaVersion: 8 } } },
  errors: [[503, 'database_unavailable', 'the database did not answer: disk I/O error']],
});

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
  }, { detail: healthDoc });
}
