import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startFakePlatformB, type FakePlatformB } from '../fakes/platform-b.ts';
import { platformBProduct } from '../fakes/payloads.ts';
import { tempDir } from '../helpers/app.ts';
import { MAIN, runCli } from '../helpers/cli.ts';
import { engineEnv, queryDataDir } from '../helpers/engine.ts';

let fake: FakePlatformB;
let data: ReturnType<typeof tempDir>;

beforeAll(() => {
  fake = startFakePlatformB({ storeHash: 'e2ehash', accessToken: 'tok-e2e', currency: 'USD' });
  fake.products.set(42, platformBProduct(42));
  data = tempDir();
});
afterAll(() => {
  fake.stop();
  data.remove();
});

/** `svc serve` as a separate process; resolves once it printed its listening line. */
async function serve() {
  const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--http', '127.0.0.1:0', '--data-dir', data.dir], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_PLATFORM_B_API_BASE: fake.url, ...(await engineEnv(data.dir)) },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('svc exited before listening');
    text += new TextDecoder().decode(value);
  }
  const { url } = JSON.parse(text.split('\n')[0]!);
  const stop = async () => {
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    return new Response(proc.stderr).text();
  };
  return { url: url as string, stop };
}

async function waitFor<T>(probe: () => Promise<T | null>, tries = 100): Promise<T | null> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== null) return value;
    await Bun.sleep(50);
  }
  return null;
}

test('a platform-B delivery acknowledged before a restart and a platform outage is fetched by the restarted server\'s worker', async () => {
  const { json: key } = await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', data.dir]);
  const auth = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
  fake.outage.catalog.status = 503;

  const first = await serve();
  const created = await fetch(`${first.url}/api/v1/admin/stores`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ platform: 'platform-b', domain: 'e2e.example.com', credentials: { storeHash: 'e2ehash', accessToken: 'tok-e2e' } }),
  });
  expect(created.status).toBe(201);
  const store = await created.json();
  expect(fake.hooks).toHaveLength(3);

  const delivered = await fake.send(`${first.url}/api/v1/platform-b/webhooks`, fake.event('store/product/created', 42), fake.hooks[0]!.headers);
  expect(await delivered.json()).toEqual({ received: true, outcome: 'queued' });
  // The server's worker tries at once and meets the outage: the job waits for its retry.
  expect(await waitFor(async () => (fake.calls.productFetches > 0 ? true : null))).toBe(true);
  const stderr = await first.stop();
  expect(stderr.match(/SVC_ENCRYPTION_KEY is not set/g)).toHaveLength(1);

  const [job] = (await queryDataDir(data.dir, "SELECT status, attempts, last_error FROM jobs WHERE kind = 'platform-b.fetch-product'")) as any[];
  expect(job).toMatchObject({ status: 'queued', attempts: 1 });
  expect(job.last_error).toContain('503');
  await queryDataDir(data.dir, 'UPDATE jobs SET run_at = 0'); // the backoff delay has passed

  fake.outage.catalog.status = null;
  const second = await serve();
  const product = await waitFor(async () => {
    const res = await fetch(`${second.url}/api/v1/admin/stores/${store.id}/products/42`, { headers: auth });
    return res.status === 200 ? res.json() : null;
  });
  expect(product).toMatchObject({ productId: '42', title: 'Trail Runner 2', currency: 'USD' });
  await second.stop();
});
