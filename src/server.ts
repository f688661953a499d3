import { newInstanceId, type Instance } from './lib/instance.ts';
import { createApp } from './app.ts';
import type { StoreRecord } from './stores/registry.ts';
import { ConfigError, listenUrl, withListenPort, type Config } from './config.ts';
import { systemClock } from './lib/clock.ts';
import { periodicTask } from './lib/periodic.ts';
import { createWebhookServices } from './webhooks/services.ts';
import { loadGeo } from './geo/lookup.ts';
import { bulkBodyLimit } from './telemetry/pipeline.ts';
import { createScanWriter } from './telemetry/writer.ts';
import { acquireInstanceLock } from './storage/sqlite/instance-lock.ts';
import { createObservability, writerHooks } from './observability/service.ts';
import { createScanRetention } from './scans/retention.ts';
import { createRecordRetention } from './retention/records.ts';
import { openEngine, type Leadership, type SqliteOptions } from './storage/open.ts';
import type { Engine } from './storage/index.ts';
import { buildWidget } from './widget/bundle.ts';
import { loadConsolePage } from './console/routes.ts';
import { loadLandingPage } from './landing/routes.ts';
import { aheadOfTheApp } from './lib/hot-route.ts';
import { createRedisBuckets } from './ratelimit/redis.ts';

export interface RunningServer {
  url: string;
  baseUrl: string;
  migrationsApplied: number;
  /** Which engine holds the state, and the database as it may be shown: the SQLite file, or the PostgreSQL URL without its credentials. */
  engine: Engine;
  database: string;
  /** Where the rate limits are kept: `in-process`, or the Redis URL without its credentials. */
  rateLimits: string;
  /** This instance's id (src/lib/instance.ts), as /healthz names it. */
  instance: string;
  /** What the operator should know at start (a setting that leaves something not working), one sentence each. */
  warnings: string[];
  /** Abort the platform calls in flight and start no job, stop accepting, let in-flight requests finish, flush queued writes, then close the database. Safe to call twice. */
  shutdown(): Promise<void>;
}

/** The listen address is taken (by another svc or any other program) or not ours to take. */
export class ListenError extends Error {
  override name = 'ListenError';
}

/** Starts the WAL checkpointer; a stand-in lets tests fail a start after it listens. */
export interface StartOptions {
  startCheckpointer?: SqliteOptions['checkpointer'];
}

/** One thing a start has started, undone by a failed start and by shutdown. */
type Undo = () => unknown;

/** Undoes what was started, last first; every step runs even when one fails (the first failure is thrown after). */
async function undoInReverse(started: Undo[]): Promise<void> {
  const failures: unknown[] = [];
  for (const undo of started.splice(0).reverse()) {
    try {
      await undo();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/** Settings that leave something not working, though svc can serve: said once at start. */
function startWarnings(config: Config, stores: StoreRecord[]): string[] {
  const warnings: string[] = [];
  if (!config.encryptionKey) warnings.push('SVC_ENCRYPTION_KEY is not set; store credentials and webhook secrets are stored in clear');
  if (!config.baseUrlExplicit && (config.http.hostname === '0.0.0.0' || config.http.hostname === '::')) {
    warnings.push(`SVC_BASE_URL is not set, so signal links and webhook registrations name ${config.baseUrl}, which no client can reach: set it to the address clients use`);
  }
  const viaApp = stores.filter((store) => store.credentialKind === 'via-app' && store.status === 'active').length;
  if (viaApp > 0 && !config.platformAAppSecret) {
    warnings.push(`SVC_PLATFORM_A_APP_SECRET is not set, so the webhook deliveries of the ${viaApp} store(s) connected through svc's platform-A app are refused (500 app_secret_not_configured)`);
  }
  return warnings;
}

/** What the listener answers until the app is ready (the port is bound before anything else happens). */
const starting = () =>
  Response.json({ error: 'starting', detail: 'svc is starting; retry in a moment' }, { status: 503, headers: { 'Retry-After': '1', 'X-Content-Type-Options': 'nosniff' } });

/**
 * Bind the listen address without SO_REUSEPORT (a port in use is a ListenError, never a shared
 * port), answering 503 until the app takes over.
 */
function bind(config: Config): Bun.Server<undefined> {
  try {
    return Bun.serve({
      hostname: config.http.hostname,
      port: config.http.port,
      // Never share the port with another process (Bun's and Elysia's listen would allow it).
      reusePort: false,
      idleTimeout: 30,
      development: false,
      // A backstop only: the app refuses oversize bodies itself with the JSON 413 (declared ones before
      // reading, streamed ones while reading). Bun's own transport-level 413 has no body, so it must
      // not fire first.
      maxRequestBodySize: 2 * bulkBodyLimit(config.maxBodyBytes),
      fetch: starting,
    });
  } catch (error) {
    const reason = (error as { code?: string }).code === 'EADDRINUSE' ? 'the address is already in use (by another svc or another program)' : (error as Error).message;
    throw new ListenError(`cannot listen on ${listenUrl(config.http).slice('http://'.length)}: ${reason}`);
  }
}

/**
 * Start serving `requested`: binds the address first (a port in use is refused before the data
 * directory is touched), then holds the data directory's instance lock for the process's life (a
 * second svc on the same directory refuses to start, before its database is opened), migrates,
 * hands the listener to the app and starts the background work. A start that fails at any step
 * undoes the steps before it, last first: no port, Worker, database or lock is left held in the process.
 */
export async function startServer(requested: Config, options: StartOptions = {}): Promise<RunningServer> {
  const listener = bind(requested);
  // Port 0 means "any free port": the default base URL (used in signal links and hook registration)
  // names the port actually bound.
  const config = requested.http.port === 0 ? withListenPort(requested, listener.port!) : requested;
  const started: Undo[] = [() => listener.stop(true)];
  try {
    // One svc per SQLite data directory; instances sharing a PostgreSQL database need no such lock.
    if (!config.postgres) {
      const lock = acquireInstanceLock(config.dataDir, `pid ${process.pid}, serving ${listenUrl(config.http)} since ${new Date().toISOString()}`);
      started.push(lock.release);
    }
    return await serve(config, listener, started, options);
  } catch (error) {
    // The start's own failure is the one reported; one of undoing it is logged.
    await undoInReverse(started).catch((undoFailure) => console.error(JSON.stringify({ level: 'error', msg: 'undoing a failed start failed', error: String(undoFailure) })));
    throw error;
  }
}

async function serve(config: Config, listening: Bun.Server<undefined>, started: Undo[], options: StartOptions): Promise<RunningServer> {
  // Its role is its engine's leadership's (below): until that answers, it follows.
  let leadership: Leadership | null = null;
  const instance: Instance = { id: newInstanceId(), role: () => (leadership?.leads() ? 'leader' : 'follower') };
  // Its connections carry the instance's name on a PostgreSQL server (pg_stat_activity).
  const engine = await openEngine(config, `svc ${instance.id}`, { checkpointer: options.startCheckpointer });
  const { storage, writePause } = engine;
  started.push(engine.close);
  const widget = await buildWidget();
  const observability = createObservability(config.log, undefined, storage.engine);
  const webhooks = createWebhookServices(storage, config, systemClock, { log: observability.logger.log, writePause });
  // A changed or missing key would otherwise start fine and answer every delivery and store call 500.
  const sealed = await webhooks.stores.sealedCredentialsProblem();
  if (sealed) throw new ConfigError('SVC_ENCRYPTION_KEY', `the store credentials in ${engine.shown} do not open (${sealed}); start with the key that sealed them`);
  const warnings = startWarnings(config, await webhooks.stores.list());
  const geo = await loadGeo(config.geoipDb);
  const scanWriter = createScanWriter(storage.hot.scanWrites, undefined, writerHooks(observability));
  const pages = { landing: await loadLandingPage(), console: await loadConsolePage() };
  // Shared rate limits: the first connection attempt is awaited (a few seconds at most: each of its steps has 1 s), so a Redis that answers takes the first requests.
  const sharedLimits = config.redis ? createRedisBuckets(config.redis, observability.logger.log) : undefined;
  if (sharedLimits) {
    started.push(() => sharedLimits.close());
    await sharedLimits.ready;
  }
  const app = createApp({
    config,
    storage,
    widget,
    webhooks,
    geo,
    scanWriter,
    observability,
    pages,
    sharedLimits,
    instance,
    peerAddress: (request) => listening.requestIP(request)?.address ?? null,
  });
  const fetch = observability.observer.handlerOf(app);
  // The hot public GETs, matched by Bun's own router before `fetch` (lib/hot-route.ts).
  const routes = aheadOfTheApp(app, observability.observer, fetch);
  listening.reload({ routes, fetch });
  // What the engine keeps running beside svc: SQLite's WAL checkpointer, in a Worker.
  const upkeep = await engine.startUpkeep(observability.logger.log);
  started.push(() => upkeep.stop());
  observability.metrics.addCollector(upkeep.collect);
  // Undone after every background task has stopped (they come later): rows still queued are committed before the checkpointer and the database stop.
  started.push(() => scanWriter.close());
  // Background work (store connections, catalogue sync, product fetches) queued in the database, including any left by a previous run.
  webhooks.runner.start();
  started.push(() => webhooks.runner.stop());
  // The background work that must run once among the instances sharing the database, on the leader
  // alone (on SQLite, the only instance): scheduled catalogue reconciliation (a pass for each store
  // whose last one is older than the interval), the roller, scan and record retention.
  const reconciliation = periodicTask('catalog reconciliation', async () => webhooks.sync.reconcileDue());
  const rollups = storage.scans.roller();
  const retention = createScanRetention(systemClock, config.scanRetentionDays, rollups);
  const records = createRecordRetention(storage.retention, systemClock, config.retention, { pause: writePause });
  const leaderWork = [
    { start: () => config.syncIntervalHours > 0 && reconciliation.start(5 * 60_000), stop: () => reconciliation.stop() },
    { start: () => rollups.start(), stop: () => rollups.stop() },
    { start: () => retention.start(), stop: () => retention.stop() },
    { start: () => records.start(), stop: () => records.stop() },
  ];
  // Changes of role run one after the other: a stop finishes (a run in progress ends at its next step)
  // before a start. Said in the log where other instances may take the lead (PostgreSQL).
  let roleChanges = Promise.resolve();
  let shuttingDown = false;
  const sayRole = (message: string) => {
    if (storage.engine === 'postgres' && !shuttingDown) observability.logger.log('info', message, { instance: instance.id });
  };
  const onRoleChange = (leads: boolean) => {
    roleChanges = roleChanges.then(async () => {
      if (leads) {
        for (const work of leaderWork) work.start();
        sayRole('this instance leads: it runs the roller, retention and catalogue reconciliation');
      } else {
        for (const work of [...leaderWork].reverse()) await work.stop();
        sayRole('this instance no longer leads: another instance takes over the roller, retention and catalogue reconciliation');
      }
    });
  };
  leadership = engine.lead(onRoleChange);
  started.push(async () => {
    shuttingDown = true;
    await leadership!.stop(); // a leader's work stops, and another instance may take over
    await roleChanges;
  });

  let stopping: Promise<void> | null = null;
  const shutdown = () => {
    stopping ??= (async () => {
      // Outbound work first: the platform calls in flight are aborted and no job starts, so a request
      // waiting on one (a store's connection) answers at once instead of holding the stop.
      const outbound = webhooks.runner.stop();
      await listening.stop(false); // no new requests; those in flight finish first
      await outbound;
      await undoInReverse(started); // background work, queued scans, checkpointer, database, instance lock
      observability.logger.flush();
    })();
    return stopping;
  };

  return { url: listenUrl({ hostname: listening.hostname ?? config.http.hostname, port: listening.port ?? config.http.port }), baseUrl: config.baseUrl, migrationsApplied: engine.migrations.applied, engine: storage.engine, database: engine.shown, rateLimits: sharedLimits?.shown ?? 'in-process', instance: instance.id, warnings, shutdown };
}
