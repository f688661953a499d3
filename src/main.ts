#!/usr/bin/env bun
// svc command line (DESIGN §4): one JSON object on stdout per command, errors on stderr, non-zero exit.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createKeyStore } from './auth/keys.ts';
import { createLeadStore } from './auth/leads.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { backupDatabase, restoreDatabase } from './storage/sqlite/backup.ts';
import { examineDatabase } from './storage/sqlite/doctor.ts';
import { buildInfo } from './lib/build-info.ts';
import { systemClock } from './lib/clock.ts';
import { ApiError, orNotFound } from './lib/errors.ts';
import { MAX_PAGE } from './lib/query.ts';
import { PROBE_USAGE, probeCommand } from './probe/command.ts';
import { startServer } from './server.ts';
import { moveToPostgres } from './storage/postgres/copy-from-sqlite.ts';
import { acquireInstanceLock } from './storage/sqlite/instance-lock.ts';
import type { Storage } from './storage/index.ts';
import { openEngine } from './storage/open.ts';
import { openSqlite } from './storage/sqlite/open.ts';
import { parseStoreSettings } from './stores/settings.ts';
import { createWebhookServices } from './webhooks/services.ts';

const USAGE = `usage:
  svc serve   [--http H:P] [--data-dir DIR | --database-url URL] [--base-url URL] [--redis-url URL]
  svc version [--database-url URL]  (or svc --version; names the engine and its schema version)
  svc migrate [--data-dir DIR | --database-url URL]
  svc keys create --scopes s1,s2 [--domains d1,d2] [--store STORE_ID] [--name NAME]
  svc keys list                     (every key, oldest first, with when it was last used)
  svc keys revoke ID
  svc leads create --email EMAIL [--verified]
  svc leads verify ID
  svc leads rotate ID
  svc leads revoke ID
  svc leads list [--email PART]
  svc migrate-to --database-url URL [--data-dir DIR]   (copies the SQLite database into an empty PostgreSQL one; with the server stopped)
  svc backup FILE
  svc restore FILE                  (with the server stopped)
  svc doctor [FILE]                 (checks the database, or a backup FILE; exit 1 when something is wrong)
  svc stores list
  svc stores sync STORE_ID          (a catalogue sync pass now; the running server carries it out)
  svc stores sync-pause STORE_ID    (no sync pass runs until sync-resume)
  svc stores sync-resume STORE_ID
  svc stores remove STORE_ID [--keep-data]   (deletes its hooks at the platform and everything svc holds for it; --keep-data: disconnect only)
  svc stores settings get STORE_ID
  svc stores settings set STORE_ID (--json JSON | --file FILE)   (the whole settings document; {} clears them)
${PROBE_USAGE}`;

/** A problem with how the command was called: exit code 2, like a bad flag. */
class UsageError extends Error {}

/**
 * svc's own backup, restore and doctor work on the SQLite file; on PostgreSQL the server's tools do
 * that work (docs/scaling.md): exit 1 with what to run instead.
 */
class PostgresToolsError extends Error {
  constructor(command: 'backup' | 'restore' | 'doctor') {
    const advice = {
      backup: 'take backups with pg_dump (pg_dump --format=custom --file=svc.dump "$SVC_DATABASE_URL"), which copies a consistent snapshot while svc keeps serving',
      restore: 'restore a pg_dump backup with pg_restore into an empty database (pg_restore --no-owner --dbname=<new database URL> svc.dump), then point SVC_DATABASE_URL at it',
      doctor: "check it with PostgreSQL's own tools (pg_amcheck for corruption); svc migrate verifies the schema version",
    }[command];
    super(`svc ${command} works on the SQLite file; this svc uses PostgreSQL: ${advice} (docs/scaling.md)`);
  }
}

const COMMON = {
  'data-dir': { type: 'string' },
  http: { type: 'string' },
  'base-url': { type: 'string' },
  'redis-url': { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

const OPTIONS = {
  ...COMMON,
  scopes: { type: 'string' },
  domains: { type: 'string' },
  store: { type: 'string' },
  name: { type: 'string' },
  email: { type: 'string' },
  verified: { type: 'boolean' },
  url: { type: 'string' },
  bulk: { type: 'boolean' },
  'batch-size': { type: 'string' },
  json: { type: 'string' },
  file: { type: 'string' },
  'keep-data': { type: 'boolean' },
} as const;

type Parsed = ReturnType<typeof parse>;

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

const print = (value: unknown) => console.log(JSON.stringify(value));
const list = (value: string | undefined) => (value ? value.split(',').map((s) => s.trim()).filter(Boolean) : []);

function onlyPositional(positionals: string[], what: string): string {
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError(`expected exactly one ${what}`);
  return positionals[0];
}

/** Runs `run` on the storage of the configured engine, migrated, closed once `run` is done (and what it returned has settled). */
async function withStorage<T>(config: Config, run: (storage: Storage) => T | Promise<T>): Promise<T> {
  const engine = await openEngine(config, 'svc cli');
  try {
    return await run(engine.storage);
  } finally {
    await engine.close();
  }
}

async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  for (const warning of server.warnings) console.error(`svc: warning: ${warning}`);
  const stop = (signal: string) => {
    console.error(`svc: ${signal} received, shutting down`);
    server.shutdown().then(
      () => process.exit(0),
      (error) => {
        console.error(`svc: shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  // Handlers first, then the "listening" line: a supervisor may signal as soon as it reads it.
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  print({ status: 'listening', url: server.url, baseUrl: server.baseUrl, database: server.database, migrationsApplied: server.migrationsApplied, rateLimits: server.rateLimits, instance: server.instance, ...buildInfo(server.engine) });
}

function keysCommand(config: Config, sub: string | undefined, rest: string[], values: Parsed['values']): Promise<void> {
  return withStorage(config, async (storage) => {
    const keys = createKeyStore(storage.auth, storage.changes, systemClock, async (id) => (await storage.stores.byId(id)) !== null);
    if (sub === 'create') {
      if (rest.length) throw new UsageError('keys create takes no positional arguments');
      const scopes = list(values.scopes);
      if (!scopes.length) throw new UsageError('keys create needs --scopes (comma-separated)');
      const { key, record } = await keys.create({ scopes, allowedDomains: list(values.domains), storeId: values.store ?? null, name: values.name });
      print({ id: record.id, key, scopes: record.scopes, allowedDomains: record.allowedDomains, storeId: record.storeId });
    } else if (sub === 'list') {
      if (rest.length) throw new UsageError('keys list takes no positional arguments');
      print({ items: await keys.list() });
    } else if (sub === 'revoke') {
      const id = onlyPositional(rest, 'key ID');
      const record = orNotFound(await keys.revoke(id), 'API key', id);
      print({ id: record.id, revokedAt: record.revokedAt });
    } else {
      throw new UsageError(`unknown keys command ${JSON.stringify(sub ?? '')}`);
    }
  });
}

function leadsCommand(config: Config, sub: string | undefined, rest: string[], values: Parsed['values']): Promise<void> {
  return withStorage(config, async (storage) => {
    const leads = createLeadStore(storage.auth.leads, storage.changes, systemClock);
    if (sub === 'list') {
      if (rest.length) throw new UsageError('leads list takes no positional arguments');
      const items = [];
      // Every matching lead, newest first, read page by page.
      for (let page = await leads.list({ email: values.email }, null, MAX_PAGE); ; page = await leads.list({ email: values.email }, page.next, MAX_PAGE)) {
        items.push(...page.items);
        if (!page.next) break;
      }
      print({ items });
      return;
    }
    if (sub === 'create') {
      if (!values.email) throw new UsageError('leads create needs --email');
      const { lead, apiToken } = await leads.create(values.email, values.verified ?? false);
      print({ id: lead.id, apiToken, verified: lead.verified });
      return;
    }
    const id = onlyPositional(rest, 'lead ID');
    if (sub === 'verify') {
      const lead = orNotFound(await leads.verify(id), 'lead', id);
      print({ id: lead.id, verified: lead.verified });
    } else if (sub === 'rotate') {
      const apiToken = orNotFound(await leads.rotate(id), 'lead', id);
      print({ id, apiToken });
    } else if (sub === 'revoke') {
      const lead = orNotFound(await leads.revoke(id), 'lead', id);
      print({ id: lead.id, tokenActive: lead.tokenActive });
    } else {
      throw new UsageError(`unknown leads command ${JSON.stringify(sub ?? '')}`);
    }
  });
}

/**
 * Stores from the command line: the same answers as the admin API (`svc stores list` is `GET
 * /api/v1/admin/stores`, `remove` is `DELETE .../:id`), and the settings document with the same
 * validation as `PUT /api/v1/admin/stores/:id/settings`.
 */
async function storesCommand(config: Config, sub: string | undefined, rest: string[], values: Parsed['values']): Promise<void> {
  if (sub === 'sync') return syncCommand(config, rest);
  if (sub === 'list' || sub === 'remove' || sub === 'sync-pause' || sub === 'sync-resume') return storeAdminCommand(config, sub, rest, values);
  const [verb, ...ids] = rest;
  if (sub !== 'settings' || (verb !== 'get' && verb !== 'set')) throw new UsageError('expected svc stores list|sync|sync-pause|sync-resume|remove STORE_ID or svc stores settings get|set STORE_ID');
  const id = onlyPositional(ids, 'store ID');
  let input: unknown;
  if (verb === 'set') {
    if ((values.json === undefined) === (values.file === undefined)) throw new UsageError('stores settings set needs exactly one of --json or --file');
    const text = values.json ?? readFileSync(values.file === '-' ? 0 : values.file!, 'utf8');
    try {
      input = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`the settings are not valid JSON: ${(error as Error).message}`);
    }
  }
  await withStorage(config, async ({ stores }) => {
    const store = orNotFound(await stores.byId(id), 'store', id);
    const settings = verb === 'get' ? store.settings : orNotFound(await stores.saveSettings(id, parseStoreSettings(input), systemClock.now()), 'store', id).settings;
    print({ id, settings });
  });
}

/**
 * Queue a catalogue sync pass for a store (unless one is running), like `POST .../sync`: the server's
 * job runner takes it up within a second; prints the store's sync state.
 */
async function syncCommand(config: Config, rest: string[]): Promise<void> {
  const id = onlyPositional(rest, 'store ID');
  await withStorage(config, async (storage) => {
    const { stores, sync } = createWebhookServices(storage, config, systemClock);
    orNotFound(await stores.get(id), 'store', id);
    await sync.request(id);
    print({ id, sync: await sync.view(id) });
  });
}

/**
 * List, remove (or disconnect) a store, pause or resume its sync, through the same store admin as
 * the API. Run beside a server, a removal stops the server's job for the store at its next step
 * (this process cannot abort the server's call in flight) and deletes the rows in one transaction.
 */
async function storeAdminCommand(config: Config, sub: 'list' | 'remove' | 'sync-pause' | 'sync-resume', rest: string[], values: Parsed['values']): Promise<void> {
  if (sub === 'list' && rest.length) throw new UsageError('stores list takes no positional arguments');
  if (values['keep-data'] !== undefined && sub !== 'remove') throw new UsageError('--keep-data goes with svc stores remove only');
  const id = sub === 'list' ? '' : onlyPositional(rest, 'store ID');
  await withStorage(config, async (storage) => {
    const { storeAdmin } = createWebhookServices(storage, config, systemClock);
    if (sub === 'list') print({ items: await storeAdmin.list() });
    else if (sub === 'remove') print(await storeAdmin.remove(id, values['keep-data'] ?? false));
    else print(await (sub === 'sync-pause' ? storeAdmin.pauseSync(id) : storeAdmin.resumeSync(id)));
  });
}

/**
 * Copies the data directory's SQLite database into the (empty) PostgreSQL database of --database-url,
 * every table in one transaction, checked by row counts; holds the data directory's instance lock
 * meanwhile, so a server still running on it refuses to start and one running is refused here
 * (writes made during the copy would not move). Prints what it copied; each table on stderr as it is done.
 */
async function migrateTo(config: Config, rest: string[]): Promise<void> {
  if (rest.length) throw new UsageError('migrate-to takes no positional arguments');
  if (!config.postgres) throw new UsageError('migrate-to needs --database-url (or SVC_DATABASE_URL): the PostgreSQL database to copy into');
  if (!existsSync(config.databaseFile)) throw new UsageError(`there is no SQLite database at ${config.databaseFile} to copy (--data-dir)`);
  const lock = acquireInstanceLock(config.dataDir, `svc migrate-to (pid ${process.pid}) since ${new Date().toISOString()}`);
  try {
    const started = performance.now();
    const source = openSqlite(config.databaseFile);
    let report;
    try {
      // The scans not folded yet are folded first, so the rollups come along and PostgreSQL's dashboards are fast at once.
      const roller = source.storage.scans.roller();
      try {
        console.error(JSON.stringify({ rollups: 'folding the scans not yet rolled up', folded: await roller.runOnce() }));
      } finally {
        await roller.stop();
      }
      report = await moveToPostgres(source.database, config.postgres, (table, rows) => console.error(JSON.stringify({ table, rows })));
    } finally {
      await source.close();
    }
    print({ from: config.databaseFile, ...report, seconds: Math.round((performance.now() - started) / 100) / 10 });
  } finally {
    lock.release();
  }
}

function backup(config: Config, rest: string[]): void {
  const target = path.resolve(onlyPositional(rest, 'backup FILE'));
  if (existsSync(target)) throw new UsageError(`${target} already exists; refusing to overwrite it`);
  print(backupDatabase(config.databaseFile, target));
}

function restore(config: Config, rest: string[]): void {
  print(restoreDatabase(config.dataDir, config.databaseFile, path.resolve(onlyPositional(rest, 'restore FILE'))));
}

/** Examines the data directory's database, or the backup FILE, and exits 1 when a check failed (the report is printed either way). */
function doctor(config: Config, rest: string[]): void {
  if (rest.length > 1) throw new UsageError('doctor takes at most one FILE');
  const report = examineDatabase(rest[0] === undefined ? config.databaseFile : path.resolve(rest[0]));
  print(report);
  if (!report.ok) process.exitCode = 1;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv);
  const [command, sub, ...rest] = positionals;
  if (values.version || command === 'version') {
    // The engine a start with these settings would use; nothing is connected to.
    print(buildInfo((values['database-url'] ?? process.env.SVC_DATABASE_URL) ? 'postgres' : 'sqlite'));
    return;
  }
  if (values.help || !command) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  // A client command: it needs none of the server's configuration.
  if (command === 'probe') {
    process.exitCode = await probeCommand(sub, rest, values, process.env);
    return;
  }
  const config = loadConfig({ http: values.http, 'data-dir': values['data-dir'], 'base-url': values['base-url'], 'redis-url': values['redis-url'], 'database-url': values['database-url'] }, process.env);
  if (config.postgres && (command === 'backup' || command === 'restore' || command === 'doctor')) throw new PostgresToolsError(command);
  if (command === 'migrate-to') return migrateTo(config, sub === undefined ? [] : [sub, ...rest]);
  switch (command) {
    case 'serve':
      if (sub !== undefined) throw new UsageError('serve takes no positional arguments');
      return serve(config);
    case 'migrate': {
      if (sub !== undefined) throw new UsageError('migrate takes no positional arguments');
      const engine = await openEngine(config, 'svc migrate');
      await engine.close();
      print({ database: engine.shown, ...engine.migrations });
      return;
    }
    case 'keys':
      return keysCommand(config, sub, rest, values);
    case 'leads':
      return leadsCommand(config, sub, rest, values);
    case 'stores':
      return storesCommand(config, sub, rest, values);
    case 'backup':
      return backup(config, sub === undefined ? [] : [sub, ...rest]);
    case 'restore':
      return restore(config, sub === undefined ? [] : [sub, ...rest]);
    case 'doctor':
      return doctor(config, sub === undefined ? [] : [sub, ...rest]);
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

main(Bun.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError) {
    console.error(`svc: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof PostgresToolsError) {
    console.error(`svc: ${error.message}`);
    process.exit(1);
  }
  if (error instanceof ApiError) {
    console.error(`svc: ${error.code}: ${error.detail}`);
    process.exit(1);
  }
  const code = (error as { code?: string }).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
    console.error(`svc: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  console.error(`svc: ${(error as Error).message ?? String(error)}`);
  process.exit(1);
});
