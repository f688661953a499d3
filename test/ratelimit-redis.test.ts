import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import type { RedisClient } from 'bun';
import { fixedClock } from '../src/lib/clock.ts';
import { createTokenBuckets } from '../src/ratelimit/buckets.ts';
import { bucketKey, createRedisBuckets, KEY_PREFIX, TAKE_SCRIPT_SHA, type RedisBuckets } from '../src/ratelimit/redis.ts';
import { handshakeRefusal } from '../src/ratelimit/redis-handshake.ts';
import { createTierLimiter } from '../src/ratelimit/tiers.ts';
import { loadConfig } from '../src/config.ts';
import { bearer, jsonRequest, makeTestApp, tempDir, type TestApp } from './helpers/app.ts';
import { runCli } from './helpers/cli.ts';
import { signedInit, TELEMETRY, scanPayload, tokenInit } from './helpers/probe.ts';
import { describeRedis, hangingProxy, startRedis, type TestRedis } from './helpers/redis.ts';
import { spawnServer } from './helpers/server.ts';

// Issue 31 item 1: with --redis-url the token buckets live in Redis, one atomic script per take, so
// N instances limit a client as one; without an answer within the deadline each instance falls back
// to its own buckets (never to no limit). Every test runs against a real redis-server.

/** The Redis password; it must appear in no log line, error, start line, /metrics or /healthz. */
const PASSWORD = 'Zx81-s3cret/pw';
const ENCODED_PASSWORD = encodeURIComponent(PASSWORD);
const noLog = () => {};

let redis: TestRedis;
let inspect: RedisClient;
/** What each test started, undone after it, last first. */
const undo: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of undo.splice(0).reverse()) await step();
  // Each test starts from an empty Redis (the anonymous ceiling's bucket is one for all of them).
  await inspect?.send('FLUSHDB', []);
});

/** Shared buckets on `url` (by default the suite's Redis), closed after the test, once their first connection attempt is over. */
async function sharedBuckets(options: { url?: string; takeTimeoutMs?: number; log?: Parameters<typeof createRedisBuckets>[1] } = {}): Promise<RedisBuckets> {
  const buckets = createRedisBuckets({ url: options.url ?? redis.url, takeTimeoutMs: options.takeTimeoutMs ?? 1000 }, options.log ?? noLog);
  undo.push(() => buckets.close());
  await buckets.ready;
  return buckets;
}

/** An app whose requests come from the address in their `x-test-peer` header, limiting in `buckets`. */
async function appWith(buckets: RedisBuckets, env: Record<string, string>, dataDir?: string): Promise<TestApp> {
  const t = await makeTestApp({ env, dataDir, sharedLimits: buckets, peerAddress: (request) => request.headers.get('x-test-peer') });
  undo.push(() => t.close());
  return t;
}

const from = (ip: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), 'x-test-peer': ip } });
const anonymousScan = (ip: string) => from(ip, { method: 'POST', body: JSON.stringify(scanPayload()), headers: { 'content-type': 'application/json' } });

/** One figure of /metrics (no labels). */
async function metric(t: TestApp, name: string): Promise<number> {
  const text = await (await t.request('/metrics', { headers: bearer(await t.keyWith('metrics:read')) })).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name} `));
  if (line === undefined) throw new Error(`${name} is not in /metrics`);
  return Number(line.slice(name.length + 1));
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(25);
  }
}

describeRedis('rate limits shared in Redis (issue 31 item 1)', () => {
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    inspect = redis.client();
  });
  afterAll(async () => {
    inspect?.close();
    await redis?.remove();
  });

  test('a client limited to N a minute gets at most N across two instances sharing one Redis: every tier, bulk batches, sign-up (API and form), console sign-in, webhook deliveries', async () => {
    const env = { SVC_RATE_ANONYMOUS: '4', SVC_RATE_AUTHED: '5', SVC_RATE_AGENT: '6', SVC_RATE_WEBHOOK: '3' };
    // Both instances serve the same database (one data directory names it on either engine), as instances behind one load balancer do.
    const data = tempDir('svc-redis-shared-');
    undo.push(() => data.remove());
    const a = await appWith(await sharedBuckets(), env, data.dir);
    const b = await appWith(await sharedBuckets(), env, data.dir);
    const agentKey = await a.keyWith('probe:scan');
    const bulkKey = await a.keyWith('probe:scan');
    const leadToken = (await a.leads.create('shared@example.com', true)).apiToken;
    const own = { origin: 'http://127.0.0.1:3000' };
    const cases: { name: string; limit: number; send: (t: TestApp, i: number) => Promise<Response> }[] = [
      { name: 'anonymous probe', limit: 4, send: (t) => t.request(TELEMETRY, anonymousScan('198.18.1.1')) },
      { name: 'authed probe', limit: 5, send: (t) => t.request(TELEMETRY, from('198.18.1.2', tokenInit(leadToken, {}))) },
      { name: 'agent probe', limit: 6, send: (t) => t.request(TELEMETRY, from('198.18.1.3', signedInit(agentKey, '{}', Date.now()))) },
      // Two scans a batch: three batches use the agent's six tokens, whichever instance takes them.
      { name: 'agent bulk batches of 2', limit: 3, send: (t) => t.request('/api/v1/probe/scan-bulk', from('198.18.1.4', signedInit(bulkKey, '{"scans":[{},{}]}', Date.now()))) },
      {
        name: 'sign-up (API and form share the bucket)',
        limit: 4,
        send: (t, i) =>
          i % 4 < 2
            ? t.request('/api/v1/public/leads', from('198.18.1.5', jsonRequest('POST', { email: `s${i}@example.com` })))
            : t.request('/', from('198.18.1.5', { method: 'POST', body: `email=f${i}%40example.com`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })),
      },
      { name: 'console sign-in', limit: 4, send: (t) => t.request('/api/v1/console/session', from('198.18.1.6', jsonRequest('POST', { key: 'sk_live_wrong' }, own))) },
      { name: 'webhook deliveries', limit: 3, send: (t) => t.request('/api/v1/platform-c/webhooks?store=nope', from('198.18.1.7', { method: 'POST', body: 'webhook_id=3' })) },
    ];
    for (const { name, limit, send } of cases) {
      const statuses = { a: [] as number[], b: [] as number[] };
      for (let i = 0; i < 2 * limit + 2; i++) {
        const [t, seen] = i % 2 === 0 ? [a, statuses.a] : [b, statuses.b];
        seen.push((await send(t, i)).status);
      }
      const passed = [...statuses.a, ...statuses.b].filter((status) => status !== 429).length;
      expect({ name, passed }).toEqual({ name, passed: limit });
      expect({ name, bothRefused: statuses.a.includes(429) && statuses.b.includes(429) }).toEqual({ name, bothRefused: true });
    }
    expect([await metric(a, 'svc_ratelimit_redis_fallbacks_total'), await metric(b, 'svc_ratelimit_redis_fallbacks_total')]).toEqual([0, 0]);
    expect([await metric(a, 'svc_ratelimit_redis_up'), await metric(b, 'svc_ratelimit_redis_up')]).toEqual([1, 1]);
  });

  test('the anonymous ceiling is one for all instances: clients rotating addresses across two instances get SVC_RATE_ANONYMOUS_GLOBAL in all', async () => {
    const env = { SVC_RATE_ANONYMOUS: '4', SVC_RATE_ANONYMOUS_GLOBAL: '6' };
    const a = await appWith(await sharedBuckets(), env);
    const b = await appWith(await sharedBuckets(), env);
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) statuses.push((await (i % 2 === 0 ? a : b).request(TELEMETRY, anonymousScan(`2001:db8:${i.toString(16)}::1`))).status);
    expect(statuses.filter((status) => status !== 429)).toHaveLength(6);
    const refused = await b.request(TELEMETRY, anonymousScan('2001:db8:ff::1'));
    expect(await refused.json()).toMatchObject({ error: 'rate_limited', limit: 6, detail: expect.stringContaining('all anonymous clients together may make 6 scans per minute') });
  });

  test('the take script answers as this process\'s buckets do: capacity, continuous refill, Retry-After and reset, all-or-nothing takes, batches above capacity', async () => {
    const shared = await sharedBuckets();
    const clock = fixedClock(Date.now());
    const here = createTokenBuckets(clock, 10);
    const identity = `semantics-${crypto.randomUUID()}`;
    const key = bucketKey('agent', identity);
    // Time passes for the Redis bucket as its last take moves back (Redis's own clock runs on too:
    // a few ms between steps, far below what changes a whole token or second here).
    const advance = async (ms: number) => {
      clock.advance(ms);
      await inspect.send('HINCRBY', [key, 'at', String(-ms)]);
    };
    const steps: (number | { advance: number })[] = [7, 4, 3, 1, { advance: 30_000 }, 1, 5, 11, { advance: 6_000 }, 2, { advance: 120_000 }, 10, 1];
    for (const step of steps) {
      if (typeof step !== 'number') {
        await advance(step.advance);
        continue;
      }
      const before = await inspect.send('HGETALL', [key]);
      const answer = await shared.take('agent', identity, 10, step, null);
      const expected = here.take(identity, 10, step);
      expect({ step, answer }).toEqual({ step, answer: expected });
      // A refused take writes nothing: all or nothing.
      if (!expected.allowed) expect(await inspect.send('HGETALL', [key])).toEqual(before);
    }
    expect(shared.fallbacks).toBe(0);
  });

  test('the client\'s bucket and the anonymous ceiling are taken in one step: refused by the ceiling, the client keeps its own tokens', async () => {
    const settings = loadConfig({}, { SVC_RATE_ANONYMOUS: '2', SVC_RATE_ANONYMOUS_GLOBAL: '2' });
    const limiter = createTierLimiter(settings, fixedClock(Date.now()), await sharedBuckets());
    const [first, second] = [`198.18.${Math.floor(Math.random() * 250)}.1`, `198.18.${Math.floor(Math.random() * 250)}.2`];
    await inspect.send('DEL', [`${KEY_PREFIX}anonymous-ceiling`]);
    for (let i = 0; i < 2; i++) expect((await limiter.take(limiter.anonymous(first))).allowed).toBe(true);
    expect(await limiter.take(limiter.anonymous(second))).toMatchObject({ allowed: false, refusedBy: 'ceiling', limit: 2 });
    expect(await inspect.send('EXISTS', [bucketKey('anonymous', limiter.anonymous(second).identity)])).toBe(0);
    await inspect.send('HINCRBY', [`${KEY_PREFIX}anonymous-ceiling`, 'at', '-30000']); // the ceiling refills one token
    expect(await limiter.take(limiter.anonymous(second))).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('every key expires when its bucket would be full again (never persistent), and has one shape whatever the client sends', async () => {
    const shared = await sharedBuckets();
    const odd = `webhooks:${'{*}\n \u0000é'.repeat(2000)}`;
    await shared.take('webhook', odd, 60, 3, null);
    await shared.take('anonymous', `ip:${crypto.randomUUID()}`, 10, 1, 3000);
    const oddKey = bucketKey('webhook', odd);
    expect(oddKey).toMatch(/^svc:rl:webhook:[0-9a-f]{64}$/);
    // 3 of 60 a minute: full again in 3 s.
    const ttl = Number(await inspect.send('PTTL', [oddKey]));
    expect(ttl).toBeGreaterThan(1000);
    expect(ttl).toBeLessThanOrEqual(3000);
    const keys = (await inspect.send('KEYS', [`${KEY_PREFIX}*`])) as string[];
    expect(keys.length).toBeGreaterThan(0);
    for (const each of keys) {
      expect(each).toMatch(/^svc:rl:((anonymous|authed|agent|webhook):[0-9a-f]{64}|anonymous-ceiling|probe)$/);
      // -1 would be a key without expiry; -2 one already gone.
      const left = Number(await inspect.send('PTTL', [each]));
      expect({ key: each, persistent: left === -1, withinAMinute: left <= 60_000 }).toEqual({ key: each, persistent: false, withinAMinute: true });
    }
    // 1 of 600 a minute is back within 100 ms: the key is gone by then.
    const quick = `quick-${crypto.randomUUID()}`;
    await shared.take('agent', quick, 600, 1, null);
    expect(Number(await inspect.send('PTTL', [bucketKey('agent', quick)]))).toBeLessThanOrEqual(100);
    await until('the full bucket\'s key expires', async () => (await inspect.send('EXISTS', [bucketKey('agent', quick)])) === 0, 2000);
  });

  test('a Redis that lost the script (a restart, SCRIPT FLUSH) is given it again by the take that finds it missing (NOSCRIPT)', async () => {
    const shared = await sharedBuckets();
    await inspect.send('SCRIPT', ['FLUSH']);
    expect(await inspect.send('SCRIPT', ['EXISTS', TAKE_SCRIPT_SHA])).toEqual([0]);
    expect(await shared.take('agent', `flushed-${crypto.randomUUID()}`, 10, 1, null)).toMatchObject({ allowed: true, remaining: 9 });
    expect(await inspect.send('SCRIPT', ['EXISTS', TAKE_SCRIPT_SHA])).toEqual([1]);
    expect(shared.fallbacks).toBe(0);
  });

  test('a refused handshake is named in the outage\'s one log line, not as a closed connection: a wrong password or user (WRONGPASS), none given (NOAUTH); the password never shown', async () => {
    const port = new URL(redis.url).port;
    const linesFor = async (url: string) => {
      const lines: Record<string, unknown>[] = [];
      await sharedBuckets({ url, log: (level, msg, fields) => lines.push({ level, msg, ...fields }) });
      return lines;
    };
    const wrongPassword = await linesFor(`redis://:${ENCODED_PASSWORD}-wrong@127.0.0.1:${port}/0`);
    const wrongUser = await linesFor(`redis://nobody:${ENCODED_PASSWORD}@127.0.0.1:${port}/0`);
    const noPassword = await linesFor(`redis://127.0.0.1:${port}/0`);
    for (const lines of [wrongPassword, wrongUser]) {
      expect(lines).toEqual([expect.objectContaining({ level: 'error', reason: expect.stringMatching(/^Redis refused the user name or password in the URL \(WRONGPASS/) })]);
    }
    expect(noPassword).toEqual([expect.objectContaining({ level: 'error', reason: expect.stringMatching(/^Redis asks for a password and the URL gives none \(NOAUTH/) })]);
    for (const secret of [PASSWORD, ENCODED_PASSWORD, 'Zx81']) expect(JSON.stringify([wrongPassword, wrongUser, noPassword])).not.toContain(secret);
  });

  test('a Redis too old for HELLO (before 6) is named as such; a Redis that refuses nothing leaves the client\'s own error', async () => {
    // A server that answers every command as a Redis 5 answers HELLO.
    const old = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: { data: (socket) => void socket.write("-ERR unknown command 'HELLO'\r\n") },
    });
    undo.push(() => old.stop(true));
    const scrub = (text: string) => text;
    expect(await handshakeRefusal(`redis://127.0.0.1:${old.port}`, 1000, scrub)).toStartWith('Redis does not know HELLO: svc needs Redis 6 or newer');
    expect(await handshakeRefusal(redis.url, 1000, scrub)).toBeNull();
    // Nothing listening: nothing to name.
    const closedPort = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: () => {} } });
    const port = closedPort.port;
    closedPort.stop(true);
    expect(await handshakeRefusal(`redis://127.0.0.1:${port}`, 1000, scrub)).toBeNull();
  });

  test('Redis stopped mid-run: each instance limits with its own buckets (never unlimited), counts each fallback, logs one line; started again, takes go back to Redis', async () => {
    const own = await startRedis();
    undo.push(() => own.remove());
    const lines: { level: string; msg: string }[] = [];
    const shared = await sharedBuckets({ url: own.url, log: (level, msg) => lines.push({ level, msg }) });
    const t = await appWith(shared, { SVC_RATE_ANONYMOUS: '3' });
    const metricsKey = await t.keyWith('metrics:read');
    const rateLimits = async () => ((await (await t.request('/healthz', { headers: bearer(metricsKey) })).json()) as { details: { rateLimits: unknown } }).details.rateLimits;
    expect(await rateLimits()).toEqual({ backend: 'redis', redis: 'up' });

    await own.stop();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.request(TELEMETRY, anonymousScan('198.18.2.1'))).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(await metric(t, 'svc_ratelimit_redis_fallbacks_total')).toBe(5);
    expect(await metric(t, 'svc_ratelimit_redis_up')).toBe(0);
    expect(await rateLimits()).toEqual({ backend: 'redis', redis: 'down' });
    await Bun.sleep(500); // reconnection attempts fail meanwhile, unlogged
    expect(lines.filter((line) => line.msg.includes('Redis is unreachable'))).toHaveLength(1);

    await own.start();
    await until('svc reconnects to Redis', async () => (await metric(t, 'svc_ratelimit_redis_up')) === 1);
    expect(lines.map((line) => line.msg)).toEqual([expect.stringContaining('Redis is unreachable'), expect.stringContaining('Redis answers again')]);
    expect((await t.request(TELEMETRY, anonymousScan('198.18.2.2'))).status).toBe(401);
    const client = own.client();
    undo.push(() => client.close());
    expect(await client.send('EXISTS', [bucketKey('anonymous', 'ip:198.18.2.2')])).toBe(1);
    expect(await metric(t, 'svc_ratelimit_redis_fallbacks_total')).toBe(5);
    expect(await rateLimits()).toEqual({ backend: 'redis', redis: 'up' });
  });

  test('a take never waits on a hung Redis beyond its deadline: the request is answered, limited by the instance\'s own buckets, which start from what Redis last said of the client', async () => {
    const proxy = hangingProxy(redis.port);
    undo.push(() => proxy.close());
    const lines: string[] = [];
    const shared = await sharedBuckets({ url: `redis://:${ENCODED_PASSWORD}@127.0.0.1:${proxy.port}/0`, takeTimeoutMs: 5, log: (_, msg) => lines.push(msg) });
    expect(shared.up).toBe(true);
    const t = await appWith(shared, { SVC_RATE_ANONYMOUS: '3' });
    // A client Redis already holds back stays held back when its takes fall back.
    for (let i = 0; i < 3; i++) expect((await t.request(TELEMETRY, anonymousScan('198.18.3.9'))).status).toBe(401);
    const before = await metric(t, 'svc_ratelimit_redis_fallbacks_total'); // 0, unless a take above was slower than 5 ms
    proxy.hang();
    expect((await t.request(TELEMETRY, anonymousScan('198.18.3.9'))).status).toBe(429);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.request(TELEMETRY, anonymousScan('198.18.3.1'))).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(await metric(t, 'svc_ratelimit_redis_fallbacks_total')).toBe(before + 6);
    expect(await inspect.send('EXISTS', [bucketKey('anonymous', 'ip:198.18.3.1')])).toBe(0);
    // Silent for a second with takes outstanding: the connection is given up (logged once), and takes fall back at once.
    await until('the hung connection is given up', () => !shared.up);
    expect(lines).toEqual([expect.stringContaining('Redis is unreachable')]);
  });

  test('an error reply that repeats the password is logged without it', async () => {
    // Just enough of Redis to be connected to (HELLO), then an error naming the password for every command.
    const server = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket, chunk) {
          for (const command of chunk.toString().split('*').filter(Boolean)) socket.write(/HELLO/i.test(command) ? '%1\r\n+server\r\n+redis\r\n' : `-ERR this reply names ${PASSWORD}\r\n`);
        },
      },
    });
    undo.push(() => server.stop(true));
    const lines: Record<string, unknown>[] = [];
    const shared = await sharedBuckets({ url: `redis://:${ENCODED_PASSWORD}@127.0.0.1:${server.port}/0`, log: (level, msg, fields) => lines.push({ level, msg, ...fields }) });
    expect(shared.up).toBe(false);
    expect(lines).toEqual([{ level: 'error', msg: expect.stringContaining('Redis is unreachable'), redis: `redis://127.0.0.1:${server.port}/0`, reason: 'ERR this reply names ***' }]);
  });

  test('the Redis password appears in no log line, error, start line, /metrics or /healthz', async () => {
    const own = await startRedis({ password: PASSWORD });
    undo.push(() => own.remove());
    const tmp = tempDir('svc-redis-secret-');
    undo.push(() => tmp.remove());
    const dataDir = `${tmp.dir}/data`;
    const refused = await runCli(['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir, '--redis-url', `redis://:${ENCODED_PASSWORD}@127.0.0.1:notaport`], { timeoutMs: 10_000 });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('invalid --redis-url');
    const metricsKey = (await runCli(['keys', 'create', '--scopes', 'metrics:read', '--data-dir', dataDir])).json.key as string;

    const wrong = await spawnServer({ dataDir, env: { SVC_REDIS_URL: `redis://:${ENCODED_PASSWORD}-wrong@127.0.0.1:${own.port}/0` } });
    await wrong.stop();
    expect(wrong.stderr()).toContain('Redis is unreachable');

    const server = await spawnServer({ dataDir, env: { SVC_REDIS_URL: own.url } });
    undo.push(() => server.stop('SIGKILL'));
    expect(server.started.rateLimits).toBe(`redis://127.0.0.1:${own.port}/0`);
    const health = await (await fetch(`${server.url}/healthz`, { headers: bearer(metricsKey) })).text();
    expect(JSON.parse(health).details.rateLimits).toEqual({ backend: 'redis', redis: 'up' });
    await own.stop();
    await fetch(`${server.url}${TELEMETRY}`, { method: 'POST', body: '{}' });
    await until('the lost connection is logged', () => server.stderr().includes('Redis is unreachable'));
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: bearer(metricsKey) })).text();
    expect(metrics).toContain('svc_ratelimit_redis_up 0');
    const downHealth = await (await fetch(`${server.url}/healthz`, { headers: bearer(metricsKey) })).text();
    for (const text of [refused.stdout, refused.stderr, wrong.stderr(), JSON.stringify(wrong.started), JSON.stringify(server.started), health, downHealth, metrics, server.stderr()]) {
      for (const secret of [PASSWORD, ENCODED_PASSWORD, 'Zx81']) expect(text).not.toContain(secret);
    }
  });
});
