import { createCatalog, descriptionTexts } from '../catalog/products.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { createSecretBox } from '../lib/secrets.ts';
import type { PlatformSettings } from '../platforms/clients.ts';
import { createEgress, type Fetch, type Resolve } from '../platforms/egress.ts';
import type { RetryPolicy } from '../platforms/http.ts';
import { CONNECT_ANSWER_MS, createStoreAdmin } from '../stores/admin.ts';
import { CONNECT_JOB, storeConnections } from '../stores/connect.ts';
import { createStoreRegistry } from '../stores/registry.ts';
import { createStoreRemoval } from '../stores/removal.ts';
import { createDispatcher } from './dispatch.ts';
import { createJobQueue, createJobRunner, storedJob, type QueueOptions } from './queue.ts';
import { createReceivers } from './receive.ts';
import { productFetchJobs } from './product-fetch.ts';
import { removalJobs } from './removal.ts';
import { createCatalogSync, type SyncLog } from '../sync/service.ts';
import type { WritePause } from '../lib/write-pause.ts';
import type { Storage } from '../storage/index.ts';

export interface WebhookServiceOptions {
  apiTimeoutMs?: number;
  queue?: QueueOptions;
  /** How long one run of a background job may take (webhooks/queue.ts). */
  jobBudgetMs?: number;
  /** Retries within one platform call when the platform says nothing of when (platforms/http.ts). */
  retry?: RetryPolicy;
  /** How long a request that connects a store waits for the connection before answering (stores/admin.ts). */
  connectAnswerMs?: number;
  /** How long a store's removal waits for the platform to confirm its hooks are deleted (stores/removal.ts). */
  unregisterWithinMs?: number;
  /** How platform targets are resolved and fetched (tests: a resolver and a fetch that never leave loopback). */
  egress?: { resolve?: Resolve; fetch?: Fetch };
  /** Where catalogue sync writes its phase lines (the app's logger); JSON lines on stderr otherwise. */
  log?: SyncLog;
  /** The engine's pause of the writes that can wait (SQLite's, while its WAL checkpointer catches up with the log): the sync's batches wait it out. */
  writePause?: Pick<WritePause, 'paused' | 'afterPause'>;
}

const logLine = (line: Record<string, unknown>) => console.error(JSON.stringify(line));

/**
 * Stores, catalogue, delivery dispatch, the store admin and the background job runner over the
 * storage. Built once per process: the app serves requests with it and the server starts/stops its
 * runner. Every platform call goes through one egress (platforms/egress.ts) and runs in a job.
 */
export function createWebhookServices(storage: Storage, config: Config, clock: Clock, options: WebhookServiceOptions = {}) {
  const storeRecords = storage.stores;
  const deliveries = storage.deliveries;
  const stores = createStoreRegistry(storeRecords, storage.changes.tableStamp(['stores']), createSecretBox(config.encryptionKey), clock);
  const catalog = createCatalog(storage.products, clock, descriptionTexts());
  const queue = createJobQueue(storage.jobs, clock, { leaseMs: config.jobLeaseSeconds * 1000, ...options.queue });
  const log: SyncLog = options.log ?? ((level, msg, fields) => logLine({ ts: new Date(clock.now()).toISOString(), level, msg, ...fields }));
  const settings: PlatformSettings = {
    baseUrl: config.baseUrl,
    platformAApiBase: config.platformAApiBase,
    platformBApiBase: config.platformBApiBase,
    apiTimeoutMs: options.apiTimeoutMs,
    retry: options.retry,
    egress: createEgress({ allowPrivate: config.allowPrivateTargets, ...options.egress }),
  };
  const sync = createCatalogSync({
    records: storage.syncs,
    clock,
    stores,
    catalog,
    queue,
    writes: options.writePause,
    settings,
    log,
    onQueued: () => runner.notify(),
    scheduleMs: config.syncIntervalHours * 3_600_000,
    stopRuns: (storeId, why, which) => runner.stopStore(storeId, why, which),
  });
  const connections = storeConnections({ stores, settings, sync });
  const removal = createStoreRemoval({
    records: storeRecords,
    stores,
    clock,
    settings,
    stopRuns: (storeId, why) => runner.stopStore(storeId, why),
    runNow: async (kind, storeId, work) => runner.runClaimed(await queue.enqueueClaimed(kind, storeId, {}), (_job, signal) => work(signal)),
    onStopped: (storeId, removed) => dispatch.storeStopped(storeId, removed),
    unregisterWithinMs: options.unregisterWithinMs,
  });
  const runner = createJobRunner(
    queue,
    {
      ...productFetchJobs({ stores, catalog, clock, settings }),
      ...removalJobs({ deliveries, stores, clock, settings }),
      ...sync.handlers,
      ...connections.handlers,
      ...removal.handlers,
    },
    ({ level, msg, ...fields }) => log(level as 'warn', String(msg), fields),
    // SQLite's only instance frees what a previous run left at once; instances sharing PostgreSQL wait out the leases.
    { budgetMs: options.jobBudgetMs, releaseLeftLeases: storage.engine === 'sqlite' },
  );
  const storeAdmin = createStoreAdmin({
    stores,
    settings: { ...settings, platformAShopSuffix: config.platformAShopSuffix },
    sync,
    removal,
    connections: {
      job: (storeId, work) => queue.claimedJob(CONNECT_JOB, storeId, { ...work }),
      run: async (storeId, work, stored) => runner.runClaimed(stored ? storedJob(stored) : await queue.enqueueClaimed(CONNECT_JOB, storeId, { ...work }), (job, signal) => connections.connect(job.storeId, work, signal)),
      connectWithoutApi: (storeId, work) => connections.connect(storeId, work, new AbortController().signal),
    },
    answerWithinMs: options.connectAnswerMs ?? CONNECT_ANSWER_MS,
  });
  const dispatch = createDispatcher({ deliveries, clock, stores, catalog, onJobQueued: runner.notify });
  const receivers = createReceivers({ config, clock, stores, dispatch });
  return { stores, catalog, queue, runner, sync, dispatch, receivers, storeAdmin, settings };
}

export type WebhookServices = ReturnType<typeof createWebhookServices>;
