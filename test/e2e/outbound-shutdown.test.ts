import { afterEach, beforeEach, expect, test } from 'bun:test';
import path from 'node:path';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { queryDataDir } from '../helpers/engine.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

// SIGTERM stops outbound work (issue 27, item 3): the calls in flight are aborted, no new one
// starts, and what was under way is taken up again by the next start. Asserted on what the
// platform saw, never on how long anything took.

const SHOP = 'shutdown.myplatform-a.com';
const CREDENTIALS = { clientSecret: 'shutdown-secret', accessToken: 'tok-shutdown' };

let tmp: ReturnType<typeof tempDir>;
let fake: FakePlatformA;
const servers: SpawnedServer[] = [];
beforeEach(() => {
  tmp = tempDir('svc-outbound-');
  fake = startFakePlatformA([{ domain: SHOP, ...CREDENTIALS, currency: 'EUR' }]);
});
afterEach(async () => {
  for (const server of servers.splice(0)) if (server.proc.exitCode === null) await server.stop('SIGKILL');
  fake.stop();
  tmp.remove();
});

test('SIGTERM while the platform throttles every call: the store was answered with its registration under way, the server exits 0 and calls the platform no more; the next start finishes the registration', async () => {
  const dataDir = path.join(tmp.dir, 'data');
  const key = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir])).json.key as string;
  // Always THROTTLED, with no cost information: svc backs off between attempts (a second, then two ...).
  fake.hooks.beforeQuery = () => Response.json({ errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED' } }] });
  const env = { SVC_PLATFORM_A_API_BASE: fake.url };
  const server = await spawnServer({ dataDir, env });
  servers.push(server);
  const res = await fetch(`${server.url}/api/v1/admin/stores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'platform-a', domain: SHOP, currency: 'EUR', credentials: CREDENTIALS }),
  });
  expect(res.status).toBe(201);
  const store = (await res.json()) as { id: string; hooks: { status: string } };
  expect(store.hooks.status).toBe('registering');
  expect(fake.stats.queries).toBeGreaterThan(0);

  expect(await server.stop('SIGTERM')).toBe(0);
  const atExit = fake.stats.queries;
  await Bun.sleep(300);
  expect(fake.stats.queries).toBe(atExit);
  // Left as it was: the connection's job is still running (not failed), the store still registering.
  expect(await queryDataDir(dataDir, "SELECT status, last_error FROM jobs WHERE kind = 'store.connect'")).toEqual([{ status: 'running', last_error: null }]);
  expect(await queryDataDir(dataDir, 'SELECT hook_status FROM stores')).toEqual([{ hook_status: 'registering' }]);

  // The platform has recovered; the next start takes the registration up again.
  fake.hooks.beforeQuery = null;
  const again = await spawnServer({ dataDir, env });
  servers.push(again);
  let hooks: { status: string } = { status: 'registering' };
  while (hooks.status === 'registering') {
    await Bun.sleep(50);
    hooks = ((await (await fetch(`${again.url}/api/v1/admin/stores/${store.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { hooks: { status: string } }).hooks;
  }
  expect(hooks.status).toBe('registered');
  expect(fake.subscriptions.map((s) => s.topic).sort()).toEqual(['APP_UNINSTALLED', 'PRODUCTS_CREATE', 'PRODUCTS_DELETE', 'PRODUCTS_UPDATE']);
  expect(await again.stop('SIGTERM')).toBe(0);
}, 60_000);
