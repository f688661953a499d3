import { afterAll, beforeAll, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { startFakePlatformB, type FakePlatformB } from '../fakes/platform-b.ts';
import { runCli } from '../helpers/cli.ts';
import { serversPerTest } from '../helpers/server.ts';

const servers = serversPerTest('svc-slow-bodies-');
let fake: FakePlatformB;
beforeAll(() => {
  fake = startFakePlatformB({ storeHash: 'slowhash', accessToken: 'tok-slow', currency: 'USD' });
});
afterAll(() => fake.stop());

const MIB = 1024 * 1024;
const CONNECTIONS = 400;
const DECLARED = 400_000;

/** Resident memory of a process in bytes (Linux). */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/**
 * Open a connection that sends a webhook delivery's headers, declaring a large body, and the first
 * few bytes of it, then nothing more; resolves with the status line svc answers (or 'closed').
 */
function slowDelivery(url: URL, headers: Record<string, string>): { socket: Socket; status: Promise<string> } {
  const socket = connect(Number(url.port), url.hostname);
  const status = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const line = text.indexOf('\r\n');
      if (line !== -1) resolve(text.slice(0, line));
    });
    socket.on('close', () => resolve('closed'));
    socket.on('error', () => resolve('closed'));
  });
  socket.on('connect', () => {
    const lines = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': String(DECLARED) }).map(([name, value]) => `${name}: ${value}`);
    socket.write(`POST /api/v1/platform-b/webhooks HTTP/1.1\r\nhost: ${url.host}\r\n${lines.join('\r\n')}\r\n\r\n{"scope":"store/product/updated","data":{"id":`);
  });
  return { socket, status };
}

test('400 slow connections to a webhook route: bytes held stay under the caps, each is answered 408 or refused at once, memory stays bounded, /healthz answers', async () => {
  const server = await servers.start({
    env: {
      SVC_PLATFORM_B_API_BASE: fake.url,
      SVC_BODY_TIMEOUT_MS: '3000',
      SVC_BODY_BUFFER_PER_CLIENT_BYTES: String(8 * MIB),
      SVC_BODY_BUFFER_BYTES: String(8 * MIB),
    },
  });
  const { json: key } = await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', servers.dataDir]);
  const created = await fetch(`${server.url}/api/v1/admin/stores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'platform-b', domain: 'slow.example.com', credentials: { storeHash: 'slowhash', accessToken: 'tok-slow' } }),
  });
  expect(created.status).toBe(201);
  const hookHeaders = fake.hooks[0]!.headers;

  const before = rssOf(server.proc.pid);
  const started = performance.now();
  const deliveries = Array.from({ length: CONNECTIONS }, () => slowDelivery(new URL(server.url), hookHeaders));
  await Bun.sleep(1500);
  const during = rssOf(server.proc.pid);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  const statuses = await Promise.all(deliveries.map((d) => d.status));
  const elapsed = performance.now() - started;
  for (const { socket } of deliveries) socket.destroy();

  const count = (line: string) => statuses.filter((s) => s === line).length;
  const timedOut = count('HTTP/1.1 408 Request Timeout');
  const refused = count('HTTP/1.1 429 Too Many Requests');
  // 8 MiB holds 20 declared bodies of 400,000 bytes: those are read until the deadline, the rest refused before any is read.
  expect(timedOut).toBe(20);
  expect(refused).toBe(CONNECTIONS - 20);
  expect(elapsed).toBeLessThan(15_000);
  // 400 bodies of 400,000 bytes would be 160 MB; what svc holds for them stays far below that.
  expect(during - before).toBeLessThan(64 * MIB);
  const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${key.key}` } })).text();
  expect(metrics).toMatch(/^svc_body_bytes_in_flight 0$/m);
}, 60_000);
