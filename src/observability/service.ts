import { andThen, type MaybePromise } from '../lib/maybe-promise.ts';
import { buildInfo } from '../lib/build-info.ts';
import { JOB_STATUSES, type DatabaseHealth } from '../storage/health.ts';
import type { Clock } from '../lib/clock.ts';
import { backlogAgeSeconds, type RollupBacklog } from '../scans/backlog.ts';
import type { SharedBuckets, TierLimiter } from '../ratelimit/tiers.ts';
import type { Engine } from '../storage/index.ts';
import { createLogger, type LogSettings } from './log.ts';
import { createMetrics, sample } from './metrics.ts';
import { createRequestObserver } from './requests.ts';

/** The process's logger, metrics and request observer: one of each per server (tests make their own). */
export function createObservability(settings: LogSettings, write?: (text: string) => void, engine: Engine = 'sqlite') {
  const logger = createLogger(settings, write);
  const metrics = createMetrics();
  const observer = createRequestObserver({ metrics, logger });
  const info = buildInfo(engine);
  const startedAt = Date.now() / 1000;
  metrics.addCollector(() =>
    [
      sample('svc_build_info', 'gauge', 'Always 1; the labels name the running build.', [
        { labels: { version: info.version, commit: info.commit, engine: info.engine, schema_version: String(info.schemaVersion) }, value: 1 },
      ]),
      sample('svc_log_lines_suppressed_total', 'counter', 'Log lines dropped by the line budget (SVC_LOG_RATE).', [{ value: logger.suppressedTotal }]),
      sample('process_resident_memory_bytes', 'gauge', 'Resident set size.', [{ value: process.memoryUsage.rss() }]),
      sample('process_start_time_seconds', 'gauge', 'Start time of the process, seconds since the epoch.', [{ value: startedAt }]),
    ].join(''),
  );
  return { logger, metrics, observer };
}

export type Observability = ReturnType<typeof createObservability>;

/** The scan writer reports its batches to the metrics and its failures to the (line-budgeted) log. */
export function writerHooks({ metrics, logger }: Observability) {
  return {
    onCommit: metrics.writerCommit,
    onFailure: (rows: number, error: unknown) => logger.log('error', 'scan batch failed', { rows, error: String(error).slice(0, 500) }),
  };
}

/** Scrape-time gauges of the engine: the job queue by status, and the database file sizes (SQLite) or this instance's connection pool (PostgreSQL). */
export function databaseCollector(health: DatabaseHealth): () => Promise<string> {
  return async () => {
    const figures = await health.figures();
    const engine =
      figures.engine === 'sqlite'
        ? [
            sample('svc_database_bytes', 'gauge', 'Size of the SQLite database file.', [{ value: figures.databaseBytes }]),
            sample('svc_database_wal_bytes', 'gauge', 'Size of the SQLite write-ahead log.', [{ value: figures.walBytes }]),
          ]
        : [
            sample('svc_database_pool_max', 'gauge', 'Most connections this instance opens to PostgreSQL (SVC_DATABASE_POOL).', [{ value: figures.pool.max }]),
            sample('svc_database_pool_connections', 'gauge', "This instance's open connections to PostgreSQL, by state (busy: running a statement).", [
              { labels: { state: 'busy' }, value: figures.pool.busy },
              { labels: { state: 'idle' }, value: figures.pool.open - figures.pool.busy },
            ]),
          ];
    return [
      ...engine,
      sample('svc_jobs', 'gauge', 'Background jobs by status (queued and running: the queue depth; dead: gave up after the last attempt).', JOB_STATUSES.map((status) => ({ labels: { status }, value: figures.jobs[status] }))),
    ].join('');
  };
}

/** Scrape-time gauges of the rollup backlog (src/scans/backlog.ts): one global figure each, nothing per client. */
export function rollupBacklogCollector(backlog: () => MaybePromise<RollupBacklog>, clock: Clock): () => MaybePromise<string> {
  return () =>
    andThen(backlog(), (waiting) => [
      sample('svc_rollup_backlog_scans', 'gauge', 'Accepted scans not yet folded into the dashboard rollups; every stats answer reads them one by one.', [{ value: waiting.scans }]),
      sample('svc_rollup_backlog_age_seconds', 'gauge', 'Seconds the oldest scan not yet rolled up has waited (0 when none waits).', [{ value: backlogAgeSeconds(waiting, clock.now()) }]),
    ].join(''));
}

interface AppState {
  limiter: TierLimiter;
  /** The buckets every instance shares (Redis), when configured. */
  sharedLimits: SharedBuckets | null;
  jobs: { readonly failures: number };
  signalCache: () => { entries: number; bytes: number };
  bodies: { readonly heldBytes: number };
}

/**
 * Scrape-time samples of in-memory state: the rate limiter's table and refusals (and, with shared
 * buckets, whether Redis answers and the takes this instance answered itself), failed job attempts,
 * the signal cache, body bytes in flight.
 */
export function appCollector({ limiter, sharedLimits, jobs, signalCache, bodies }: AppState): () => string {
  return () =>
    [
      ...(sharedLimits ? sharedLimitSamples(sharedLimits) : []),
      sample('svc_signal_cache_bytes', 'gauge', 'Bytes of rendered signals held in memory (bounded by SVC_SIGNAL_CACHE_BYTES).', [{ value: signalCache().bytes }]),
      sample('svc_signal_cache_entries', 'gauge', 'Products with rendered signals held in memory (bounded).', [{ value: signalCache().entries }]),
      sample('svc_rate_limited_total', 'counter', 'Requests refused by the rate limiter, by tier.', Object.entries(limiter.refused).map(([tier, value]) => ({ labels: { tier }, value }))),
      sample('svc_ratelimit_buckets', 'gauge', 'Live rate-limit buckets (bounded).', [{ value: limiter.size }]),
      sample('svc_body_bytes_in_flight', 'gauge', 'Request body bytes held by reads in flight (capped by SVC_BODY_BUFFER_BYTES).', [{ value: bodies.heldBytes }]),
      sample('svc_job_failures_total', 'counter', 'Failed background job attempts.', [{ value: jobs.failures }]),
    ].join('');
}

/** Whether the shared rate-limit buckets answer, and how many takes fell back to this instance's own (one figure each, nothing per client). */
function sharedLimitSamples(shared: SharedBuckets): string[] {
  return [
    sample('svc_ratelimit_redis_up', 'gauge', 'Whether rate-limit takes reach Redis now (1) or fall back to this instance\'s own buckets (0).', [{ value: shared.up ? 1 : 0 }]),
    sample('svc_ratelimit_redis_fallbacks_total', 'counter', 'Rate-limit takes this instance answered from its own buckets because Redis did not answer in time or was unreachable.', [{ value: shared.fallbacks }]),
  ];
}
