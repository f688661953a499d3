import { afterEach, beforeEach, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import path from 'node:path';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { engineEnv, POSTGRES_MODE } from '../helpers/engine.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

// SIGTERM drains an instance (issue 31 item 4): it stops accepting, finishes the requests in flight
// (test/e2e/server.test.ts), hands back its leases and exits. Here the lease of a job it was running (a store's connection, held
// up by a platform that throttles every call) is free once it has exited, so another instance
// sharing the database takes the job at once instead of when the lease would have ended (a minute).
// On SQLite and, under npm run test:postgres, on PostgreSQL (the data directory names its database).

const SHOP = 'drain.myplatform-a.com';
const CREDENTIALS = { clientSecret: 'drain-secret', accessToken: 'tok-drain' };

let tmp: ReturnType<typeof tempDir>;
let fake: FakePlatformA;
const servers: SpawnedServer[] = [];
beforeEach(() => {
  tmp = tempDir('svc-drain-');
  fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR' }]);
});
afterEach(async () => {
  for (const server of servers.splice(0)) if (server.proc.exitCode === null) await server.stop('SIGKILL');
  fake.stop();
  tmp.remove();
});

/** The store connection jobs of the data directory's database, whichever the engine. */
async function connectJobs(dataDir: string): Promise<{ status: string; leaseUntil: number | null; lastError: string | null }[]> {
  const text = "SELECT status, lease_until, last_error FROM jobs WHERE kind = 'store.connect'";
  let rows: Record<string, unknown>[];
  if (POSTGRES_MODE) {
    const sql = new SQL((await engineEnv(dataDir)).SVC_DATABASE_URL!);
    rows = [...(await sql.unsafe(text))];
    await sql.close();
  } else {
    const db = new Database(path.join(dataDir, 'svc.db'), { readonly: true });
    rows = db.query(text).all() as Record<string, unknown>[];
    db.close();
  }
  return rows.map((row) => ({ status: String(row.status), leaseUntil: row.lease_until === null ? null : Number(row.lease_until), lastError: (row.last_error as string | null) ?? null }));
}

test('SIGTERM drains: the instance exits 0 with the lease of the job it was running handed back (free at once, not counted as failed)', async () => {
  const dataDir = path.join(tmp.dir, 'data');
  const key = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir])).json.key as string;
  fake.hooks.beforeQuery = () => Response.json({ errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] });
  const server = await spawnServer({ dataDir, env: { SVC_PLATFORM_A_API_BASE: fake.url } });
  servers.push(server);
  const created = await fetch(`${server.url}/api/v1/admin/stores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'platform-a', domain: SHOP, currency: 'EUR', credentials: CREDENTIALS }),
  });
  expect(created.status).toBe(201);
  const [held] = await connectJobs(dataDir);
  expect(held!.status).toBe('running');
  expect(held!.leaseUntil!).toBeGreaterThan(Date.now()); // leased to this instance for a minute

  expect(await server.stop('SIGTERM')).toBe(0);
  const exitedAt = Date.now();

  const [after] = await connectJobs(dataDir);
  expect(after!.status).toBe('running'); // not failed: stopped by the shutdown
  expect(after!.lastError).toBeNull();
  expect(after!.leaseUntil!).toBeLessThanOrEqual(exitedAt); // handed back: any instance may claim it now
}, 60_000);
