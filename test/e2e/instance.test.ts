import { existsSync } from 'node:fs';
import { describe, expect, test } from 'bun:test';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { POSTGRES_MODE, queryDataDir, testSqliteOnly } from '../helpers/engine.ts';
import { serversPerTest } from '../helpers/server.ts';

const servers = serversPerTest('svc-instance-');
const start = () => servers.start();
/** `svc serve` that must refuse to start: killed after 10 s if it does not exit by itself. */
const refusedServe = (http: string, dir: string) => runCli(['serve', '--http', http, '--data-dir', dir], { timeoutMs: 10_000 });
const portOf = (url: string) => new URL(url).port;
/** These tests spawn several processes each; on a busy machine that takes more than bun's default 5 s. */
const SPAWNS_TIMEOUT = 30_000;

describe('one instance per address and per data directory', () => {
  test('a port already in use is refused with one line and exit 1, never shared, before the data directory is touched', async () => {
    const first = await start();
    const other = path.join(servers.dir, 'other');
    const second = await refusedServe(`127.0.0.1:${portOf(first.url)}`, other);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr.trim()).toBe(`svc: cannot listen on 127.0.0.1:${portOf(first.url)}: the address is already in use (by another svc or another program)`);
    // Nothing was created or migrated for a start that could not listen.
    expect(existsSync(other)).toBe(false);
    // Every request still reaches the first server's database.
    const key = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', servers.dataDir])).json.key;
    for (let i = 0; i < 20; i++) {
      expect((await fetch(`${first.url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    }
  }, SPAWNS_TIMEOUT);

  testSqliteOnly('instances sharing a PostgreSQL database take no lock on a data directory (test/postgres/serve.test.ts runs two)', 'a data directory served by a running svc is refused with one line naming it, exit 1', async () => {
    const first = await start();
    const second = await refusedServe('127.0.0.1:0', servers.dataDir);
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(`svc: the data directory ${servers.dataDir} is in use by another svc (pid ${first.proc.pid}, serving ${first.url} since `);
    expect(lines[0]).toEndWith('); stop it first');
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  }, SPAWNS_TIMEOUT);

  test('the lock dies with its process: after kill -9 the directory serves again at once', async () => {
    const first = await start();
    await first.stop('SIGKILL');
    const second = await start();
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
    // A clean stop releases it too.
    expect(await second.stop('SIGTERM')).toBe(0);
    const third = await start();
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
  }, SPAWNS_TIMEOUT);

  test('CLI commands still run beside a server on the same directory', async () => {
    const server = await start();
    const created = await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', servers.dataDir]);
    expect(created.code).toBe(0);
    const listed = await fetch(`${server.url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${created.json.key}` } });
    expect(listed.status).toBe(200);
  }, SPAWNS_TIMEOUT);
});

describe('every instance names itself', () => {
  test('the start line names the instance, /healthz details carry the same id and its role (one SQLite instance leads; a lone PostgreSQL instance takes the lead at its first try), and a restart is another instance', async () => {
    const key = (await runCli(['keys', 'create', '--scopes', 'metrics:read', '--data-dir', servers.dataDir])).json.key;
    const details = async (url: string) => ((await (await fetch(`${url}/healthz`, { headers: { authorization: `Bearer ${key}` } })).json()) as { details: { instance: { id: string; role: string } } }).details.instance;
    /** Its details once it leads: at once on SQLite; on PostgreSQL once its first try for the lead has answered (it follows until then). */
    const leading = async (url: string) => {
      let instance = await details(url);
      for (let tries = 0; POSTGRES_MODE && instance.role === 'follower' && tries < 100; tries++) {
        await Bun.sleep(50);
        instance = await details(url);
      }
      return instance;
    };
    const first = await start();
    const id = first.started.instance as string;
    expect(id).toMatch(/^.+-[0-9a-f]{6}$/);
    expect(await leading(first.url)).toEqual({ id, role: 'leader' });
    expect(await first.stop()).toBe(0);
    const again = await start();
    expect(again.started.instance).not.toBe(id);
    expect(await leading(again.url)).toEqual({ id: again.started.instance as string, role: 'leader' });
  }, SPAWNS_TIMEOUT);
});

describe('versions', () => {
  const BUILD_FIELDS = { version: expect.stringMatching(/^\d+\.\d+\.\d+/), commit: expect.stringMatching(/^([0-9a-f]{40}(-dirty)?|unknown)$/), engine: 'sqlite', schemaVersion: expect.any(Number) };
  const migrations = async (folder: string) => (await Bun.file(path.resolve(import.meta.dir, '../..', folder, 'meta/_journal.json')).json()).entries.length;

  test('svc --version and svc version print version, commit, build date and schema version', async () => {
    const flag = await runCli(['--version']);
    const command = await runCli(['version']);
    expect(flag.code).toBe(0);
    expect(flag.json).toEqual({ ...BUILD_FIELDS, buildDate: null });
    expect(command.json).toEqual(flag.json);
    // Running from source: the checkout's commit; the schema version is the number of bundled migrations.
    expect(flag.json.schemaVersion).toBe(await migrations('drizzle'));
  }, SPAWNS_TIMEOUT);

  test('svc version names the engine a start would use, with that engine\'s schema version, without connecting to it', async () => {
    // Nothing listens on port 1: version does not connect.
    const flag = await runCli(['version', '--database-url', 'postgres://svc:secret@127.0.0.1:1/svc']);
    expect(flag.code).toBe(0);
    expect(flag.json).toEqual({ ...BUILD_FIELDS, buildDate: null, engine: 'postgres', schemaVersion: await migrations('drizzle-pg') });
    const env = await runCli(['version'], { env: { SVC_DATABASE_URL: 'postgres://svc:secret@127.0.0.1:1/svc' } });
    expect(env.json).toEqual(flag.json);
  }, SPAWNS_TIMEOUT);

  test('the start line and /healthz carry the same build fields', async () => {
    // The engine and schema version a start on the data directory uses (its PostgreSQL database under npm run test:postgres).
    const expected = (await runCli(['version', '--data-dir', servers.dataDir])).json;
    const server = await start();
    const health = await (await fetch(`${server.url}/healthz`)).json();
    expect(health).toEqual({ status: 'ok', ...expected });
    expect(server.started).toMatchObject({ status: 'listening', ...expected });
  }, SPAWNS_TIMEOUT);

  test('a database migrated by a newer svc is refused with one line, and left as it was', async () => {
    expect((await runCli(['migrate', '--data-dir', servers.dataDir])).code).toBe(0);
    // drizzle's record of the migrations applied: in the database's own schema on PostgreSQL.
    const migrationsTable = POSTGRES_MODE ? 'drizzle.__drizzle_migrations' : '__drizzle_migrations';
    const [{ n, latest }] = (await queryDataDir(servers.dataDir, `SELECT count(*) AS n, max(created_at) AS latest FROM ${migrationsTable}`)) as [{ n: number; latest: number }];
    // What a newer binary's next migration leaves behind.
    await queryDataDir(servers.dataDir, `INSERT INTO ${migrationsTable} (hash, created_at) VALUES (?, ?)`, 'future', latest + 1000);

    const serve = await refusedServe('127.0.0.1:0', servers.dataDir);
    expect(serve.code).toBe(1);
    const newer = `has schema version ${n + 1}, newer than this svc's ${n}: it was migrated by a newer svc; run that version`;
    expect(serve.stderr.trim()).toBe(
      POSTGRES_MODE
        ? `svc: the PostgreSQL database ${newer}`
        : `svc: the database ${path.join(servers.dataDir, 'svc.db')} ${newer}, or restore a backup taken before the upgrade (svc restore FILE)`,
    );
    const migrate = await runCli(['migrate', '--data-dir', servers.dataDir]);
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain('newer than this svc');
    expect(await queryDataDir(servers.dataDir, `SELECT count(*) AS n FROM ${migrationsTable}`)).toEqual([{ n: n + 1 }]);
  }, SPAWNS_TIMEOUT);
});
