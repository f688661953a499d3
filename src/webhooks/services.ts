import { createCatalog } from '../catalog/products.ts';
import type { Config } from '../config.ts';
import type { AppDatabase } from '../db/index.ts';
import type { Clock } from '../lib/clock.ts';
import { createSecretBox } from '../lib/secrets.ts';
import { createStoreRegistry } from '../stores/registry.ts';
import { createDispatcher } from './dispatch.ts';
import { createJobQueue, createJobRunner, type QueueOptions } from './queue.ts';
import { createReceivers } from './receive.ts';
import { productFetchJobs } from './product-fetch.ts';
import { removalJobs } from './removal.ts';
import { createCatalogSync, type SyncLog } from '../sync/service.ts';

export interface WebhookServiceOptions {
  apiTimeoutMs?: number;
  queue?: QueueOptions;
  /** Where catalogue sync writes its phase lines (the app's logger); JSON lines on stderr otherwise. */
  log?: SyncLog;
}

const logLine = (line: Record<string, unknown>) => console.error(JSON.stringify(line));

/**
 * Stores, catalogue, delivery dispatch and the background job runner over one database. Built once
 * per process: the app serves requests with it and the server starts/stops its runner.
 */
export function createWebhookServices(database: AppDatabase, config: Config, clock: Clock, options: WebhookServiceOptions = {}) {
  const stores = createStoreRegistry(database.db, createSecretBox(config.encryptionKey), clock);
  const catalog = createCatalog(database.db, clock);
  const queue = createJobQueue(database.db, clock, options.queue);
  const log: SyncLog = options.log ?? ((level, msg, fields) => logLine({ ts: new Date(clock.now()).toISOString(), level, msg, ...fields }));
  const sync = createCatalogSync({
    database,
    clock,
    stores,
    catalog,
    queue,
    settings: { ...config, apiTimeoutMs: options.apiTimeoutMs },
    log,
    onQueued: () => runner.notify(),
  });
  const runner = createJobRunner(
    queue,
    {
      ...productFetchJobs({ stores, catalog, clock, platformBApiBase: config.platformBApiBase, apiTimeoutMs: options.apiTimeoutMs }),
      ...removalJobs({ sqlite: database.sqlite, stores, catalog, clock, settings: { ...config, apiTimeoutMs: options.apiTimeoutMs } }),
      ...sync.handlers,
    },
    ({ level, msg, ...fields }) => log(level as 'warn', String(msg), fields),
  );
  const dispatch = createDispatcher({ db: database.db, sqlite: database.sqlite, clock, stores, catalog, queue, onJobQueued: runner.notify });
  const receivers = createReceivers({ config, clock, stores, dispatch });
  return { stores, catalog, queue, runner, sync, dispatch, receivers, apiTimeoutMs: options.apiTimeoutMs };
}

export type WebhookServices = ReturnType<typeof createWebhookServices>;
