import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app.ts';
import { createKeyStore, type KeyStore, type Scope } from '../../src/auth/keys.ts';
import { createLeadStore, type LeadStore } from '../../src/auth/leads.ts';
import { loadConfig, type Config, type Env } from '../../src/config.ts';
import { migrateDatabase, openDatabase, type AppDatabase } from '../../src/storage/sqlite/db/index.ts';
import { geoFromBytes, type GeoLookup } from '../../src/geo/lookup.ts';
import type { PeerAddress } from '../../src/lib/client-ip.ts';
import { systemClock, type Clock } from '../../src/lib/clock.ts';
import { createObservability, type Observability } from '../../src/observability/service.ts';
import type { Fetch, Resolve } from '../../src/platforms/egress.ts';
import { createWebhookServices, type WebhookServiceOptions, type WebhookServices } from '../../src/webhooks/services.ts';
import { buildWidget, type WidgetBundle } from '../../src/widget/bundle.ts';
import { loadConsolePage } from '../../src/console/routes.ts';
import { loadLandingPage } from '../../src/landing/routes.ts';
import type { PageBundle } from '../../src/lib/page-bundle.ts';
import type { SharedBuckets } from '../../src/ratelimit/tiers.ts';
import { sqliteAuthRecords } from '../../src/storage/sqlite/auth.ts';
import { sqliteChangeFeed } from '../../src/storage/sqlite/changes.ts';
import type { ChangeFeed } from '../../src/storage/changes.ts';
import { sqliteStorage } from '../../src/storage/sqlite/index.ts';
import type { Storage } from '../../src/storage/index.ts';
import type { ScanRollups } from '../../src/storage/scans.ts';
import { writePause } from '../../src/storage/sqlite/write-pause.ts';
import { openPostgresClient } from '../../src/storage/postgres/client.ts';
import { postgresStorage } from '../../src/storage/postgres/index.ts';
import { CHANGE_CHANNEL } from '../../src/storage/postgres/changes.ts';
import { asSqliteReads, engineEnv } from './engine.ts';
import { storageOn } from './storage.ts';
import { createMigratedTestDatabase, POSTGRES_MODE, type TestDatabase } from './postgres.ts';

import { buildMmdb } from './mmdb.ts';

/** The networks of the test GeoIP database, in both record shapes that svc reads. */
export const TEST_GEO_NETWORKS = {
  '81.2.69.0/24': { country: { iso_code: 'GB' } },
  '2.125.160.0/20': { country: { iso_code: 'FR' } },
  '8.8.8.0/24': { country_code: 'US' },
  '2a02:8800::/32': { country: { iso_code: 'DE' } },
};
export const testGeo = (): GeoLookup => geoFromBytes(buildMmdb(TEST_GEO_NETWORKS), 'test fixture');

let widget: Promise<WidgetBundle> | null = null;
/** The widget is built once per test process; it does not depend on the app's state. */
export const testWidget = () => (widget ??= buildWidget());

let pages: Promise<{ landing: PageBundle; console: PageBundle }> | null = null;
/** The landing page and console bundles, built once per test process (about 50 ms). */
export const testPages = () => (pages ??= Promise.all([loadLandingPage(), loadConsolePage()]).then(([landing, console]) => ({ landing, console })));

/**
 * Every platform call of a test app goes to loopback only, whatever a test (or a regression) asks
 * for: tests never send traffic beyond loopback. Anything else fails as a refused connection.
 */
export const loopbackOnly: Fetch = (url, init) => {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (host !== '127.0.0.1' && host !== '::1' && host !== 'localhost') return Promise.reject(Object.assign(new Error(`tests connect to loopback only, not ${host}`), { code: 'ECONNREFUSED' }));
  return fetch(url, init);
};

/** Tests resolve no host name (a DNS query leaves the machine): a test of name resolution stubs its own resolver. */
export const noResolver: Resolve = async (hostname) => {
  throw Object.assign(new Error(`tests resolve no host names (${hostname})`), { code: 'ENOTFOUND' });
};

export function tempDir(prefix = 'svc-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  config: Config;
  /** The storage the app runs on, whichever the engine (for what the server runs beside the app, such as record retention). */
  storage: Storage;
  /** The app's SQLite database; absent under PostgreSQL (reading it throws there): inspect rows engine-neutrally with `t.query`. */
  database: AppDatabase;
  /**
   * Plain SQL with `?` placeholders on the app's database, whichever the engine. Rows read alike on
   * both: PostgreSQL's bigints come back as numbers and its booleans as 1 and 0, as SQLite's do.
   */
  query(sql: string, ...params: (string | number | null)[]): Promise<Record<string, unknown>[]>;
  clock: Clock;
  keys: KeyStore;
  leads: LeadStore;
  /** Stores, catalogue and the job runner; `webhooks.runner.runDueJobs()` drives the queue in tests. */
  webhooks: WebhookServices;
  /** With `listen: true`: the app's real HTTP origin (also its base URL), for fake platforms to call. */
  url: string | null;
  /** Send a request through the app's HTTP surface (the observed handler the server serves). `path` is relative to http://localhost, or a whole URL (to give another Host, as Bun builds the URL from it). */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** The app's logger, metrics and request observer; its log lines are captured, not printed. */
  observability: Observability;
  /** The log lines written so far, parsed. */
  logLines(): Record<string, unknown>[];
  /** A fresh raw key with these scopes. */
  keyWith(...scopes: Scope[]): Promise<string>;
  /**
   * Resolves once this app's change feed has heard of every commit made before the call: at once on
   * SQLite; on PostgreSQL a commit's notification arrives a few ms after it and empties the caches it
   * names, so a test that asserts a cache hit (an answer without a promise) waits for this first.
   */
  changesHeard(): Promise<void>;
  /**
   * Commits `sql` (`?` placeholders) through a connection of its own to the app's database, as the
   * CLI or another instance would, and waits until the app's change feed has heard of it (at once on SQLite).
   */
  commitElsewhere(sql: string, ...params: (string | number | null)[]): Promise<void>;
  /** A scan roller (with scan retention) on this app's engine, as its server runs one (SQLite: in a Worker of its own), stopped by close(); `batchScans` caps each batch. */
  rollups(batchScans?: number): ScanRollups;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Env;
  clock?: Clock;
  /** Also serve the app over real HTTP on a free port (its URL becomes SVC_BASE_URL), so fakes can deliver to it. */
  listen?: boolean;
  webhooks?: WebhookServiceOptions;
  /** Reuse a data directory (to reopen a database as after a restart); it is then not removed on close. */
  dataDir?: string;
  geo?: GeoLookup;
  /** The socket peer address each request seems to come from (there is no socket under app.handle). */
  peerAddress?: PeerAddress;
  /** Rate-limit buckets shared with other apps (Redis, test/helpers/redis.ts); the caller closes them. */
  sharedLimits?: SharedBuckets;
  /** `sqlite`: on SQLite even under npm run test:postgres (for tests of what moves SQLite's data to PostgreSQL). */
  engine?: 'sqlite';
  /** The storage the app is given, from the storage of its database (to answer as another engine would). */
  storage?: (sqlite: Storage) => Storage;
}

/**
 * An app over a real SQLite file in a temp directory (or, under npm run test:postgres, a new PostgreSQL
 * database), migrated, with an optional fixed clock.
 */
export async function makeTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const tmp = options.dataDir ? null : tempDir();
  let handler: (request: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 });
  const server = options.listen ? Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => handler(request) }) : null;
  // The fake platforms listen on loopback: private targets are allowed unless a test of their refusal says 0.
  const env = { SVC_ALLOW_PRIVATE_TARGETS: '1', ...options.env, ...(server ? { SVC_BASE_URL: `http://127.0.0.1:${server.port}` } : {}) };
  // Under npm run test:postgres every test app has its own new database (./postgres.ts); one given a
  // data directory has that directory's (./engine.ts), shared with the commands and servers naming it
  // and kept, as the directory is, for a reopen.
  const postgres = POSTGRES_MODE && options.engine !== 'sqlite' ? await (options.dataDir ? databaseOf(options.dataDir) : createMigratedTestDatabase()) : null;
  const config = loadConfig({ 'data-dir': options.dataDir ?? tmp!.dir }, postgres ? { ...env, SVC_DATABASE_URL: postgres.url } : env);
  const engine = postgres ? await onPostgres(postgres.url) : onSqlite(config.databaseFile);
  const clock = options.clock ?? systemClock;
  let logText = '';
  const observability = createObservability(config.log, (text) => {
    logText += text;
  });
  const storage = (options.storage ?? ((given) => given))(engine.storage);
  const webhooks = createWebhookServices(storage, config, clock, {
    log: observability.logger.log,
    writePause: engine.writePause,
    ...options.webhooks,
    egress: { resolve: noResolver, fetch: loopbackOnly, ...options.webhooks?.egress },
  });
  const app = createApp({
    config,
    widget: await testWidget(),
    clock,
    webhooks,
    storage,
    geo: options.geo ?? testGeo(),
    peerAddress: options.peerAddress ?? (() => '127.0.0.1'),
    observability,
    pages: await testPages(),
    sharedLimits: options.sharedLimits,
  });
  handler = observability.observer.handlerOf(app);
  const keys = createKeyStore(engine.auth, engine.changes, clock);
  const rollers: ScanRollups[] = [];
  return {
    app,
    config,
    storage,
    get database() {
      if (!engine.database) throw new Error('t.database is the SQLite database, and this app runs on PostgreSQL: inspect rows with t.query, or mark the test SQLite-only (test/helpers/engine.ts)');
      return engine.database;
    },
    query: engine.query,
    clock,
    keys,
    leads: createLeadStore(engine.auth.leads, engine.changes, clock),
    webhooks,
    url: server ? config.baseUrl : null,
    request: async (p, init) => handler(new Request(p.startsWith('http') ? p : `http://localhost${p}`, init)),
    observability,
    logLines: () => logText.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
    keyWith: async (...scopes) => (await keys.create({ scopes, name: 'test' })).key,
    changesHeard: engine.changesHeard,
    commitElsewhere: engine.commitElsewhere,
    rollups: (batchScans) => {
      const rollups = engine.storage.scans.roller(batchScans);
      rollers.push(rollups);
      return rollups;
    },
    close: async () => {
      server?.stop(true);
      for (const rollups of rollers) await rollups.stop();
      await engine.close();
      await postgres?.drop();
      tmp?.remove();
    },
  };
}

/**
 * Waits until a PostgreSQL change feed has heard of every commit made so far, by anyone:
 * notifications reach it in commit order, so once a marker sent now (through `sql`, any connection
 * to the database) is heard, so is every earlier commit.
 */
export async function changesHeardBy(changes: ChangeFeed, sql: SQL): Promise<void> {
  const marker = `test-marker-${crypto.randomUUID()}`;
  const heard = changes.tableStamp([marker]);
  const before = heard();
  await sql.notify(CHANGE_CHANNEL, marker);
  for (let waited = 0; heard() === before; waited += 5) {
    if (waited > 5000) throw new Error('the change feed did not hear its own notification within 5 s');
    await Bun.sleep(5);
  }
}

/** The PostgreSQL database of a data directory (./engine.ts): left in place on close, as the directory is. */
async function databaseOf(dataDir: string): Promise<TestDatabase> {
  const { SVC_DATABASE_URL } = await engineEnv(dataDir);
  return { url: SVC_DATABASE_URL!, drop: async () => {} };
}

/** A test app's engine: its storage, the key and lead records the test's own stores use, and a way to inspect rows. */
interface TestEngine {
  storage: Storage;
  auth: Storage['auth'];
  changes: Storage['changes'];
  writePause?: ReturnType<typeof writePause>;
  /** SQLite only. */
  database?: AppDatabase;
  query: TestApp['query'];
  changesHeard: TestApp['changesHeard'];
  commitElsewhere: TestApp['commitElsewhere'];
  close(): Promise<void>;
}

function onSqlite(file: string): TestEngine {
  const database = openDatabase(file);
  migrateDatabase(database);
  return {
    storage: sqliteStorage(database),
    auth: sqliteAuthRecords(database),
    changes: sqliteChangeFeed(database),
    writePause: writePause(database.sqlite),
    database,
    query: async (sql, ...params) => database.sqlite.query(sql).all(...params) as Record<string, unknown>[],
    changesHeard: async () => {},
    commitElsewhere: async (sql, ...params) => {
      const other = new Database(file);
      try {
        other.run(sql, params);
      } finally {
        other.close();
      }
    },
    close: async () => database.close(),
  };
}

async function onPostgres(url: string): Promise<TestEngine> {
  const client = openPostgresClient(url, { max: 4 });
  const storage = postgresStorage(client);
  await storage.changes.ready;
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  const changesHeard = () => changesHeardBy(storage.changes, client.sql);
  return {
    storage,
    auth: storage.auth,
    changes: storage.changes,
    query: async (sql, ...params) => {
      const result = await client.sql.unsafe(numbered(sql), params);
      return [...result].map((row) => asSqliteReads(row, result.columns));
    },
    changesHeard,
    commitElsewhere: async (sql, ...params) => {
      const other = new SQL({ url, max: 1 });
      try {
        await other.unsafe(numbered(sql), params);
      } finally {
        await other.close();
      }
      await changesHeard();
    },
    close: async () => {
      await storage.changes.close();
      await client.close();
    },
  };
}

/**
 * Another connection to a test app's database, as another process (the CLI, another instance) has:
 * its own storage, on the app's engine. Close it after use.
 */
export function otherConnection(t: TestApp): Promise<{ storage: Storage; close(): Promise<void> }> {
  return storageOn(t.config.postgres ? { kind: 'postgres', url: t.config.postgres.url } : { kind: 'sqlite', database: { file: t.config.databaseFile } });
}

/** After a test that ran an app against fakes: stop its job runner (aborting its calls), close it, then stop the fakes. */
export async function closeAppAndFakes(t: TestApp | null, stops: (() => void)[]): Promise<void> {
  await t?.webhooks.runner.stop();
  await t?.close();
  for (const stop of stops.splice(0)) stop();
}

export function jsonRequest(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
