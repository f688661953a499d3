// svc serve on PostgreSQL (issue 30 item 1): a spawned server started with SVC_DATABASE_URL on an
// empty database, used as a scanner and an operator would, then restarted: the state is the
// database's, not the data directory's (npm run test:postgres). With SVC_E2E_BINARY=dist/svc the
// compiled binary is the server and the CLI, run from an empty directory (CI does both).
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { scanPayload, signedInit } from '../helpers/probe.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

describePostgres('svc serve on PostgreSQL', () => {
  let database: TestDatabase;
  let dir: ReturnType<typeof tempDir>;
  const running: SpawnedServer[] = [];
  beforeEach(async () => {
    database = await createTestDatabase();
    dir = tempDir('svc-serve-pg-');
  });
  afterEach(async () => {
    for (const server of running.splice(0)) await server.stop('SIGKILL');
    await database.drop();
    dir.remove();
  });

  const binary = process.env.SVC_E2E_BINARY;
  /** How svc is run: `bun src/main.ts` from the checkout, or the binary from the empty temporary directory. */
  const how = () => (binary ? { command: [path.resolve(REPO_ROOT, binary)], cwd: dir.dir } : {});
  const env = () => ({ SVC_DATABASE_URL: database.url });
  const dataDir = () => path.join(dir.dir, 'data');
  const cli = (args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}) => runCli(args, { env: env(), ...options, ...how() });
  const start = async (dataDirectory = dataDir()) => {
    const server = await spawnServer({ dataDir: dataDirectory, env: env(), ...how() });
    running.push(server);
    return server;
  };
  const password = () => decodeURIComponent(new URL(database.url).password);

  test('an empty database is migrated at start; the start line names the engine and the database without credentials; scans, dashboard, badge, health and metrics work, and survive a restart', async () => {
    const server = await start();
    const { status, engine, database: shown, migrationsApplied } = server.started as Record<string, unknown>;
    expect([status, engine]).toEqual(['listening', 'postgres']);
    expect(shown).toMatch(/^postgres:\/\/127\.0\.0\.1:\d+\/svc_test_\w+$/);
    expect(migrationsApplied).toBeGreaterThan(0);
    const key = (await cli(['keys', 'create', '--scopes', 'probe:scan,dashboard:read,metrics:read'])).json.key as string;
    const auth = { authorization: `Bearer ${key}` };

    const now = Date.now();
    const scans = Array.from({ length: 5 }, (_, n) => scanPayload({ url: `https://shop.example.com/p/${n}`, hostname: 'shop.example.com', scannedAt: new Date(now - n * 60_000).toISOString() }));
    const telemetry = await fetch(`${server.url}/api/v1/probe/telemetry`, signedInit(key, JSON.stringify(scans[0]), now));
    expect(telemetry.status).toBe(204);
    const bulk = await fetch(`${server.url}/api/v1/probe/scan-bulk`, signedInit(key, JSON.stringify({ scans }), now));
    expect(await bulk.json()).toMatchObject({ inserted: 4, skipped: 1 });

    const list = await (await fetch(`${server.url}/api/v1/dashboard/scans?limit=10`, { headers: auth })).json();
    expect(list.items).toHaveLength(5);
    const stats = await (await fetch(`${server.url}/api/v1/dashboard/stats?groupBy=grade`, { headers: auth })).json();
    expect(stats.groups.reduce((sum: number, group: { scans: number }) => sum + group.scans, 0)).toBe(5);
    expect((await fetch(`${server.url}/api/v1/public/probe/badge?domain=shop.example.com`)).status).toBe(200);

    const health = await (await fetch(`${server.url}/healthz`, { headers: auth })).json();
    expect(health).toMatchObject({ status: 'ok', engine: 'postgres', details: { database: { engine: 'postgres', pool: { max: 10 } } } });
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: auth })).text();
    expect(metrics).toContain('svc_database_pool_max 10\n');
    expect(metrics).toContain('engine="postgres"');
    expect(metrics).not.toContain(password());

    expect(await server.stop()).toBe(0);
    expect(server.stderr()).not.toContain(password());
    // Nothing of the state went to the data directory: no SQLite file was created there.
    expect(existsSync(path.join(dataDir(), 'svc.db'))).toBe(false);

    const again = await start();
    expect(again.started).toMatchObject({ engine: 'postgres', migrationsApplied: 0 });
    const after = await (await fetch(`${again.url}/api/v1/dashboard/scans?limit=10`, { headers: auth })).json();
    expect(after.items.map((item: { id: string }) => item.id).sort()).toEqual(list.items.map((item: { id: string }) => item.id).sort());
  }, 60_000);

  test('a refused login stops serve with one line (exit 1), the password never shown', async () => {
    const url = Object.assign(new URL(database.url), { password: 'Wrong-Secret-4' }).href;
    const refused = await cli(['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir()], { env: { SVC_DATABASE_URL: url }, timeoutMs: 20_000 });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^svc: cannot use PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/svc_test_\w+: the login was refused/)]);
    expect(refused.stderr).not.toContain('Wrong-Secret-4');
  }, 30_000);

  test('two instances on one database: one leads and runs the roller; killed, the other takes the lead within seconds and folds what it accepted', async () => {
    const key = (await cli(['keys', 'create', '--scopes', 'probe:scan,metrics:read'])).json.key as string;
    const auth = { authorization: `Bearer ${key}` };
    const details = async (server: SpawnedServer) => (await (await fetch(`${server.url}/healthz`, { headers: auth })).json()).details;
    const until = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`not within 15 s: ${what}`);
        await Bun.sleep(100);
      }
    };
    const first = await start(path.join(dir.dir, 'first'));
    await until('the first instance leads', async () => (await details(first)).instance.role === 'leader');
    const second = await start(path.join(dir.dir, 'second'));
    // It tries for the lead every second: it must have tried and found it held.
    await Bun.sleep(1_500);
    expect((await details(second)).instance.role).toBe('follower');
    expect((await details(first)).instance.role).toBe('leader');

    const send = async (server: SpawnedServer, from: number) => {
      const now = Date.now();
      const scans = Array.from({ length: 5 }, (_, n) => scanPayload({ url: `https://shop.example.com/p/${from + n}`, hostname: 'shop.example.com', scannedAt: new Date(now - n * 60_000).toISOString() }));
      expect((await fetch(`${server.url}/api/v1/probe/scan-bulk`, signedInit(key, JSON.stringify({ scans }), now))).status).toBe(200);
    };
    // The follower accepts scans; the leader's roller folds them (the backlog is the database's).
    await send(second, 0);
    await until('the leader folds the scans the follower accepted', async () => (await details(second)).rollupBacklog.scans === 0);

    // Only the leader started the roller, retention and reconciliation (and said so).
    expect(first.stderr()).toContain('this instance leads');
    expect(second.stderr()).not.toContain('this instance leads');

    first.proc.kill('SIGKILL');
    await first.proc.exited;
    await until('the follower takes the lead', async () => (await details(second)).instance.role === 'leader');
    await send(second, 100);
    await until('the new leader folds what it accepted', async () => (await details(second)).rollupBacklog.scans === 0);
    expect(second.stderr()).toContain('this instance leads');
  }, 90_000);

  test("an instance starting beside others never releases their jobs' leases: a job another instance runs stays its own until its lease ends", async () => {
    expect((await cli(['migrate'])).code).toBe(0);
    const sql = new SQL(database.url);
    try {
      const leaseUntil = Date.now() + 60_000;
      await sql`INSERT INTO jobs (id, kind, store_id, payload, status, attempts, run_at, lease_until, created_at) VALUES ('job_other', 'catalog-sync', 'st_other', '{}', 'running', 1, 0, ${leaseUntil}, 0)`;
      const server = await start();
      // The runner starts with the server and polls every second: two polls at least.
      await Bun.sleep(2_500);
      expect(server.proc.exitCode).toBeNull();
      const [job] = await sql`SELECT status, attempts, lease_until FROM jobs WHERE id = 'job_other'`;
      expect([job.status, Number(job.attempts), Number(job.lease_until)]).toEqual(['running', 1, leaseUntil]);
    } finally {
      await sql.close();
    }
  }, 30_000);
});
