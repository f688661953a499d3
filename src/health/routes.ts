import { Elysia, t } from 'elysia';
import { buildInfo, bundledSchemaVersion } from '../lib/build-info.ts';
import type { Clock } from '../lib/clock.ts';
import { errorResponse } from '../lib/errors.ts';
import { apiDoc, integer } from '../lib/api-doc.ts';
import { rollupBacklogSchema } from '../scans/docs.ts';
import { limiterBackendSchema } from '../ratelimit/docs.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { DatabaseHealth } from '../storage/health.ts';

const build = {
  version: t.String(),
  commit: t.String(),
  buildDate: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  engine: t.Union([t.Literal('sqlite'), t.Literal('postgres')], { description: 'Which engine holds the state: `sqlite` (the embedded default) or `postgres` (`SVC_DATABASE_URL`)' }),
  schemaVersion: integer({ description: 'Migrations this build carries for that engine' }),
};
const jobs = t.Object({ queued: integer(), running: integer(), done: integer(), dead: integer() }, { description: 'Background jobs by status' });
const database = t.Union(
  [
    t.Object({ engine: t.Literal('sqlite'), jobs, databaseBytes: integer({ description: 'Size of the database file' }), walBytes: integer({ description: 'Size of its write-ahead log' }) }),
    t.Object({
      engine: t.Literal('postgres'),
      jobs,
      pool: t.Object(
        { max: integer({ description: 'SVC_DATABASE_POOL' }), open: integer({ description: 'Connections this instance holds open' }), busy: integer({ description: 'Of those, running a statement now' }) },
        { description: "This instance's connections to PostgreSQL" },
      ),
    }),
  ],
  { description: 'The engine and its figures' },
);
const instance = t.Object(
  {
    id: t.String({ description: "This instance's id: its host's name and 6 random hex digits, new at each start (also in its start line)" }),
    role: t.Union([t.Literal('leader'), t.Literal('follower')], { description: '`leader`: runs the background work that must run once (the roller, retention, reconciliation); one SQLite instance always leads' }),
  },
  { description: 'Which instance answered' },
);
const details = t.Object({ instance, database, rollupBacklog: rollupBacklogSchema, rateLimits: limiterBackendSchema }, { description: 'Only for a key with `metrics:read` (or `admin`) in `Authorization: Bearer`' });
// The example's schemaVersion is this build's own: a fixed number goes stale with the next migration.
const healthDoc = apiDoc({
  summary: 'Health and version',
  description:
    'Up, and the database answers and takes writes (checked at most every 5 s); every answer names the build. A 503 `database_not_writable` also carries `status: "degraded"`: reads still work, scans and deliveries would be refused. ' +
    'Public; with `Authorization: Bearer` of a key with `metrics:read` (or `admin`) the answer adds `details` (which instance answered and its role, the engine with its figures (the pool on PostgreSQL), the rollup backlog, and where the rate limits are kept: in-process, or Redis and whether it answers), and a key that is not valid or lacks the scope is refused as on /metrics.',
  tag: 'operations',
  auth: 'public',
  inputs: [{ name: 'Authorization', in: 'header', description: '`Bearer sk_live_…` of a key with `metrics:read` (or `admin`), for `details`; optional', schema: t.String() }],
  responses: {
    200: {
      description: 'Healthy',
      schema: t.Object({ status: t.Literal('ok'), ...build, details: t.Optional(details) }),
      example: {
        status: 'ok',
        version: '0.1.0',
        commit: 'b8f8063a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f',
        buildDate: '2026-11-23T10:00:00.000Z',
        engine: 'sqlite',
        schemaVersion: bundledSchemaVersion(),
        details: { instance: { id: 'web-1-3f9a2c', role: 'leader' }, database: { engine: 'sqlite', jobs: { queued: 0, running: 1, done: 420, dead: 0 }, databaseBytes: 52_428_800, walBytes: 4_194_304 }, rollupBacklog: { scans: 1200, oldestReceivedAt: '2026-11-23T10:00:00.000Z', ageSeconds: 0.8, slowsDashboard: false }, rateLimits: { backend: 'redis', redis: 'up' } },
      },
    },
  },
  errors: [
    [401, 'invalid_api_key', 'the API key is unknown, malformed or revoked'],
    [403, 'insufficient_scope', 'this key lacks the metrics:read scope'],
    [503, 'database_unavailable', 'the database did not answer: disk I/O error'],
    [503, 'database_not_writable', 'the database answers but does not take writes: database or disk is full'],
  ],
});

/**
 * What /healthz adds for an operator's key: `authorized` decides from the request's
 * `Authorization: Bearer` (false without one; the 401/403 of a key that is not valid or lacks the
 * scope; a promise when the key must be looked up), `read` gives the details once the database has answered.
 */
export interface HealthDetails {
  authorized(request: Request): MaybePromise<boolean>;
  read(): MaybePromise<Record<string, unknown>>;
}

/** How often a health check may write its probe row; in between, the last attempt's result stands. */
export const WRITE_PROBE_INTERVAL_MS = 5_000;

/**
 * Whether the database takes writes, by rewriting one row at most every WRITE_PROBE_INTERVAL_MS:
 * a flood of health checks costs one tiny write per interval, not one each (those arriving while it
 * runs wait for it). Null when the last attempt committed, else its error message.
 */
function writeProbe(health: DatabaseHealth, clock: Clock): () => MaybePromise<string | null> {
  let probedAt = -Infinity;
  let failure: string | null = null;
  let probing: Promise<string | null> | null = null;
  return () => {
    if (probing) return probing;
    const now = clock.now();
    // A wall clock stepped back (NTP, a restored VM) probes at once rather than after the step.
    if (now >= probedAt && now - probedAt < WRITE_PROBE_INTERVAL_MS) return failure;
    probedAt = now;
    probing = health.probeWrite(now).then(
      () => (failure = null),
      (error: unknown) => (failure = (error as Error).message),
    );
    return probing.finally(() => (probing = null));
  };
}

/**
 * GET /healthz: the process is up and the database answers a query (else 503 `database_unavailable`)
 * and takes writes (else 503 with status `degraded`: svc still serves reads, but would refuse scans
 * and deliveries). Every answer names the build and the engine; an operator's key also gets
 * `details`. The route is public (load balancers call it without a key), so it checks that key
 * itself, before anything else.
 */
export function healthRoutes(health: DatabaseHealth, clock: Clock, details: HealthDetails) {
  const writeFailure = writeProbe(health, clock);
  const build = () => buildInfo(health.engine);
  return new Elysia().get('/healthz', async ({ request }) => {
    const detailed = await details.authorized(request);
    try {
      await health.ping();
    } catch (error) {
      return errorResponse(503, 'database_unavailable', `the database did not answer: ${(error as Error).message}`, {}, { ...build() });
    }
    const extra = detailed ? { details: await details.read() } : {};
    const failure = await writeFailure();
    if (failure !== null) {
      return errorResponse(503, 'database_not_writable', `the database answers but does not take writes: ${failure}`, {}, { status: 'degraded', ...build(), ...extra });
    }
    return { status: 'ok', ...build(), ...extra };
  }, { detail: healthDoc });
}
