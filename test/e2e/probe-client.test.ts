import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { createProbeClient, ProbeError, type BatchSizeChange, type RetryInfo, type TelemetryPayload } from '../../clients/probe/src/index.ts';
import { startFake } from '../fakes/http.ts';
import { startProbeServer, type ProbeServer } from '../helpers/probe.ts';

// The probe client against a spawned svc, as a scanner uses it. `open` has rates high enough never
// to throttle; `tight` allows 60 scans a minute per key, so a test drains a bucket on purpose.
let open: ProbeServer;
let tight: ProbeServer;

beforeAll(async () => {
  [open, tight] = await Promise.all([
    startProbeServer({ SVC_RATE_AGENT: '100000', SVC_RATE_AUTHED: '100000' }),
    startProbeServer({ SVC_RATE_AGENT: '60' }),
  ]);
});
afterAll(async () => {
  await Promise.all([open?.stop(), tight?.stop()]);
});

const scanOf = (hostname: string, n: number, extra: Partial<TelemetryPayload> = {}): TelemetryPayload => ({
  hostname,
  url: `https://${hostname}/p/${n}`,
  scannedAt: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
  signals: { title: { value: `Page ${n}`, length: 6 } },
  ...extra,
});

/** Forwards every request to `target` unchanged and records what went through. */
function recordingProxy(target: string) {
  const requests: { path: string; bytes: number; scans: number | null; headers: Headers }[] = [];
  const proxy = startFake(async (request, url) => {
    const body = new Uint8Array(await request.arrayBuffer());
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { scans?: unknown[] };
    requests.push({ path: url.pathname, bytes: body.length, scans: parsed.scans?.length ?? null, headers: request.headers });
    const upstream = await fetch(target + url.pathname, { method: request.method, headers: request.headers, body });
    return new Response(upstream.body, { status: upstream.status, headers: upstream.headers });
  });
  return { ...proxy, requests };
}

/** Runs `send` through a recording proxy in front of `target`: its result and the requests that went through. */
async function viaProxy<T>(target: string, send: (baseUrl: string) => Promise<T>) {
  const proxy = recordingProxy(target);
  try {
    return { result: await send(proxy.url), requests: proxy.requests };
  } finally {
    proxy.stop();
  }
}

function retriesOf(options: { retries?: number; maxDelay?: number } = {}) {
  const seen: RetryInfo[] = [];
  return { seen, options: { ...options, onRetry: (retry: RetryInfo) => seen.push(retry) } };
}

async function failure(promise: Promise<unknown>): Promise<ProbeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProbeError);
  return error as ProbeError;
}

describe('authentication modes', () => {
  test('mode 2: a signed API key stores the scan; the signature covers the exact bytes sent', async () => {
    const key = await open.key();
    const { requests } = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl, key }).send(scanOf('mode2.example.com', 1)));
    const [sent] = requests;
    expect(sent!.path).toBe('/api/v1/probe/telemetry');
    expect(sent!.headers.get('x-probe-key')).toBe(key);
    expect(sent!.headers.get('x-probe-timestamp')).toMatch(/^\d{13}$/);
    expect(sent!.headers.get('x-probe-token')).toBeNull();
    expect(await open.count('mode2.example.com')).toBe(1);
  });

  test('mode 1: a lead token stores the scan and sends no signature headers', async () => {
    const token = await open.token();
    const { requests } = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl: baseUrl + '/', token }).send(scanOf('mode1.example.com', 1)));
    const headers = requests[0]!.headers;
    expect(headers.get('x-probe-token')).toBe(token);
    expect([headers.get('x-probe-key'), headers.get('x-probe-timestamp'), headers.get('x-probe-signature')]).toEqual([null, null, null]);
    expect(await open.count('mode1.example.com')).toBe(1);
  });

  test('a client needs exactly one of token and key', () => {
    expect(() => createProbeClient({ baseUrl: open.url, token: 't', key: 'k' } as never)).toThrow(TypeError);
    expect(() => createProbeClient({ baseUrl: open.url } as never)).toThrow(TypeError);
  });
});

describe('unicode bodies are signed byte-exact', () => {
  const title = 'Café — 日本語 🎉 “quotes” \\ back\u2028line \ud800 lone';

  test('svc verifies the signature and stores the text unchanged', async () => {
    const key = await open.key();
    await createProbeClient({ baseUrl: open.url, key }).send(scanOf('unicode.example.com', 1, { signals: { title: { value: title } }, note: 'ünïcödé' }));
    const [stored] = await open.scans('unicode.example.com');
    expect(stored!.signals.title.value).toBe(title);
    expect(stored!.data).toEqual({ note: 'ünïcödé' });
  });

  test('the signature is the hex HMAC-SHA256 of "<ms timestamp>.<raw UTF-8 bytes>", recomputed independently', async () => {
    const seen: { timestamp: string; signature: string; body: Buffer }[] = [];
    const fake = startFake(async (request) => {
      seen.push({ timestamp: request.headers.get('x-probe-timestamp')!, signature: request.headers.get('x-probe-signature')!, body: Buffer.from(await request.arrayBuffer()) });
      return new Response(null, { status: 204 });
    });
    const key = 'sk_live_unicode-test-key';
    const before = Date.now();
    try {
      await createProbeClient({ baseUrl: fake.url, key }).send(scanOf('unicode.example.com', 2, { signals: { title: { value: title } } }));
    } finally {
      fake.stop();
    }
    const { timestamp, signature, body } = seen[0]!;
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(Date.now());
    expect(body.includes(Buffer.from('🎉', 'utf8'))).toBe(true); // raw UTF-8, not \u escapes
    const expected = createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${timestamp}.`), body])).digest('hex');
    expect(signature).toBe(expected);
    expect(JSON.parse(body.toString('utf8')).signals.title.value).toBe(title);
  });
});

describe('sendBulk', () => {
  test('2,500 scans go as three valid requests of 1000, 1000 and 500, with errors at their original indexes', async () => {
    const key = await open.key();
    const host = 'bulk2500.example.com';
    const scans: TelemetryPayload[] = Array.from({ length: 2500 }, (_, n) => scanOf(host, n));
    const invalid = [7, 1000, 1999, 2499];
    for (const index of invalid) delete (scans[index] as Partial<TelemetryPayload>).hostname;
    scans[1500] = { ...scans[1499]! }; // a duplicate of (url, scannedAt) in another request: skipped
    const { result, requests } = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl, key }).sendBulk(scans));
    expect(requests.map((r) => [r.path, r.scans])).toEqual([
      ['/api/v1/probe/scan-bulk', 1000],
      ['/api/v1/probe/scan-bulk', 1000],
      ['/api/v1/probe/scan-bulk', 500],
    ]);
    expect(result.errors.map((e) => [e.index, e.error])).toEqual(invalid.map((index) => [index, 'missing_field']));
    expect(result.errors.every((e) => e.detail === 'hostname is required')).toBe(true);
    expect(result).toMatchObject({ inserted: 2500 - invalid.length - 1, skipped: 1 });
    expect(await open.count(host)).toBe(2500 - invalid.length - 1);
  });

  test('requests stay under the 16 MiB bulk body limit; a scan over the per-scan limit is reported by index and not sent', async () => {
    const key = await open.key();
    const host = 'bulkbytes.example.com';
    // ~300 KB each (a page with a large JSON-LD block): 60 of them are 18 MB, more than one request holds.
    const scans = Array.from({ length: 61 }, (_, n) => scanOf(host, n, { signals: { jsonLd: [{ '@type': 'Product', description: `${n} `.padEnd(300_000, 'x') }] } }));
    scans[30] = scanOf(host, 30, { signals: { jsonLd: [{ description: 'y'.repeat(600_000) }] } });
    const { result, requests } = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl, key }).sendBulk(scans));
    expect(requests.length).toBe(2);
    expect(requests.every((r) => r.bytes <= 16 * 1024 * 1024)).toBe(true);
    expect(requests.reduce((n, r) => n + r.scans!, 0)).toBe(60);
    expect(result.inserted).toBe(60);
    expect(result.errors).toEqual([{ index: 30, error: 'payload_too_large', detail: expect.stringContaining('524288') }]);
    expect(await open.count(host)).toBe(60);
  });

  test('maxBulkScans and maxBulkBytes set smaller limits', async () => {
    const key = await open.key();
    const host = 'bulkoptions.example.com';
    const scans = Array.from({ length: 25 }, (_, n) => scanOf(host, n));
    const byCount = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl, key, maxBulkScans: 10 }).sendBulk(scans));
    expect(byCount.requests.map((r) => r.scans)).toEqual([10, 10, 5]);
    const sizes = scans.map((scan) => JSON.stringify(scan).length); // ASCII: characters are bytes
    const limit = 12 + sizes[0]! * 4;
    const bySize = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl, key, maxBulkBytes: limit }).sendBulk(scans));
    expect(bySize.requests.length).toBeGreaterThan(4);
    let next = 0;
    for (const request of bySize.requests) {
      expect(request.bytes).toBeLessThanOrEqual(limit);
      next += request.scans!;
      // Greedy: each request is as full as the limit allows.
      if (next < scans.length) expect(request.bytes + 1 + sizes[next]!).toBeGreaterThan(limit);
    }
    expect(next).toBe(25);
  });

  test('an empty list sends nothing', async () => {
    const fake = startFake(() => new Response('unexpected', { status: 500 }));
    try {
      expect(await createProbeClient({ baseUrl: fake.url, key: 'k' }).sendBulk([])).toEqual({ inserted: 0, skipped: 0, errors: [] });
    } finally {
      fake.stop();
    }
  });
});

describe('rate limits (429)', () => {
  const drain = async (key: string, host: string) => {
    const result = await createProbeClient({ baseUrl: tight.url, key }).sendBulk(Array.from({ length: 60 }, (_, n) => scanOf(host, n)));
    expect(result.inserted).toBe(60);
  };

  test('a 429 is retried after its Retry-After, and the retry passes', async () => {
    const key = await tight.key();
    await drain(key, 'retry-after.example.com');
    const { seen, options } = retriesOf();
    await createProbeClient({ baseUrl: tight.url, key, ...options }).send(scanOf('retry-after.example.com', 100));
    expect(seen.map((r) => [r.attempt, r.delay, r.error.status, r.error.error])).toEqual([[1, 1000, 429, 'rate_limited']]);
    expect(await tight.count('retry-after.example.com')).toBe(61);
  }, 15_000);

  test('with the retry budget spent, the 429 surfaces with the server body', async () => {
    const key = await tight.key();
    await drain(key, 'budget.example.com');
    const { seen, options } = retriesOf({ retries: 0 });
    const error = await failure(createProbeClient({ baseUrl: tight.url, key, ...options }).send(scanOf('budget.example.com', 100)));
    expect(seen).toEqual([]);
    expect(error).toMatchObject({ status: 429, error: 'rate_limited', body: { tier: 'agent', limit: 60, retryAfter: 1 } });
    expect(error.detail).toContain('60 scans per minute');
  });

  test('a Retry-After longer than maxDelay fails at once instead of waiting', async () => {
    const key = await tight.key();
    await drain(key, 'maxdelay.example.com');
    const { seen, options } = retriesOf({ maxDelay: 500 });
    const error = await failure(createProbeClient({ baseUrl: tight.url, key, ...options }).send(scanOf('maxdelay.example.com', 100)));
    expect(seen).toEqual([]);
    expect(error.status).toBe(429);
  });

  test('a bulk 429 waits for Retry-After plus the token svc takes on admission, and the retry passes', async () => {
    const key = await tight.key();
    await drain(key, 'bulk-retry.example.com');
    const { seen, options } = retriesOf();
    const result = await createProbeClient({ baseUrl: tight.url, key, ...options }).sendBulk([scanOf('bulk-retry.example.com', 100), scanOf('bulk-retry.example.com', 101)]);
    expect(result).toEqual({ inserted: 2, skipped: 0, errors: [] });
    // Retry-After says 1 s (one token); the retry's admission takes that token, so the batch waits for one more.
    expect(seen.map((r) => [r.delay, r.error.error])).toEqual([[2000, 'rate_limited']]);
    expect(await tight.count('bulk-retry.example.com')).toBe(62);
  }, 15_000);

  test('a full batch at the agent tier waits the whole minute svc asks for (within the default maxDelay); onRetry can stop it', async () => {
    let calls = 0;
    const fake = startFake(() => {
      calls++;
      return Response.json(
        { error: 'rate_limited', detail: 'the agent tier allows 1000 scans per minute; retry in 60 s', tier: 'agent', limit: 1000, retryAfter: 60 },
        { status: 429, headers: { 'retry-after': '60' } },
      );
    });
    const stop = new Error('stop waiting');
    const delays: number[] = [];
    const onRetry = ({ delay }: RetryInfo) => {
      delays.push(delay);
      throw stop;
    };
    try {
      const scans = Array.from({ length: 1000 }, (_, n) => scanOf('full-batch.example.com', n));
      expect(await createProbeClient({ baseUrl: fake.url, key: 'k', onRetry }).sendBulk(scans).catch((error: unknown) => error)).toBe(stop);
    } finally {
      fake.stop();
    }
    expect(calls).toBe(1);
    expect(delays).toEqual([60_060]); // Retry-After plus one token at 1000 a minute
  });

  test('a batch larger than the tier takes a minute goes again in batches of the limit svc names: every scan stored once', async () => {
    const key = await tight.key();
    const host = 'overcapacity.example.com';
    const sizes: BatchSizeChange[] = [];
    const { result, requests } = await viaProxy(tight.url, (baseUrl) =>
      createProbeClient({ baseUrl, key, onBatchSize: (change) => sizes.push(change) }).sendBulk(Array.from({ length: 61 }, (_, n) => scanOf(host, n))),
    );
    expect(result).toEqual({ inserted: 61, skipped: 0, errors: [] });
    expect(sizes).toEqual([{ size: 60, tier: 'agent' }]);
    // 61 refused as batch_exceeds_limit, then 60 (waiting out a 429 on the way) and the last one.
    expect(requests[0]!.scans).toBe(61);
    expect(requests.slice(1).every((r) => r.scans! <= 60)).toBe(true);
    expect(requests.at(-1)!.scans).toBe(1);
    expect(await tight.count(host)).toBe(61);
  }, 20_000);

  test('batches follow the tier quota svc names in RateLimit-Policy, from its first answer on', async () => {
    const batches: number[] = [];
    const fake = startFake(async (request) => {
      const { scans } = (await request.json()) as { scans: unknown[] };
      batches.push(scans.length);
      return Response.json({ inserted: scans.length, skipped: 0, errors: [] }, { headers: { 'ratelimit-policy': '"authed";q=4;w=60' } });
    });
    const sizes: BatchSizeChange[] = [];
    try {
      const result = await createProbeClient({ baseUrl: fake.url, token: 't', maxBulkScans: 6, onBatchSize: (change) => sizes.push(change) }).sendBulk(
        Array.from({ length: 15 }, (_, n) => scanOf('policy.example.com', n)),
      );
      expect(result.inserted).toBe(15);
    } finally {
      fake.stop();
    }
    expect(batches).toEqual([6, 4, 4, 1]);
    expect(sizes).toEqual([{ size: 4, tier: 'authed' }]);
  });
});

describe('bulk scans without scannedAt', () => {
  test('each is given the time it is first sent, so a batch sent again after a lost answer is stored once', async () => {
    const key = await open.key();
    const host = 'lost-answer.example.com';
    const scans = Array.from({ length: 5 }, (_, n) => ({ hostname: host, url: `https://${host}/p/${n}`, signals: {} }));
    const bodies: string[] = [];
    // svc stores the first request, but its answer is lost on the way back (a gateway's 502).
    const gateway = startFake(async (request, url) => {
      const body = await request.text();
      bodies.push(body);
      const upstream = await fetch(open.url + url.pathname, { method: 'POST', headers: request.headers, body });
      return bodies.length === 1 ? new Response('Bad Gateway', { status: 502 }) : upstream;
    });
    const before = Date.now();
    try {
      const result = await createProbeClient({ baseUrl: gateway.url, key, retries: 1 }).sendBulk(scans);
      expect(result).toEqual({ inserted: 0, skipped: 5, errors: [] });
    } finally {
      gateway.stop();
    }
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toBe(bodies[0]!);
    expect(scans.every((scan) => !('scannedAt' in scan))).toBe(true); // the caller's objects are left alone
    const stored = await open.scans(host);
    expect(stored).toHaveLength(5);
    for (const scan of stored) expect(Date.parse(scan.scannedAt)).toBeGreaterThanOrEqual(before - 2000);
  });

  test('a time given on a clock running ahead of svc’s is given again on svc’s clock, once', async () => {
    const token = await open.token();
    const host = 'clock-ahead.example.com';
    const scans = Array.from({ length: 3 }, (_, n) => ({ hostname: host, url: `https://${host}/p/${n}`, signals: {} }));
    const { result, requests } = await viaProxy(open.url, (baseUrl) => createProbeClient({ baseUrl, token, now: () => Date.now() + 10 * 60_000 }).sendBulk(scans));
    expect(result).toEqual({ inserted: 3, skipped: 0, errors: [] });
    expect(requests.map((r) => r.scans)).toEqual([3, 3]);
    const stored = await open.scans(host);
    expect(stored).toHaveLength(3);
    for (const scan of stored) expect(Math.abs(Date.parse(scan.scannedAt) - Date.now())).toBeLessThan(60_000);
  });

  test('a scan svc still finds ahead of its clock after that is reported, not given a time again', async () => {
    let requests = 0;
    const fake = startFake(async (request) => {
      requests++;
      const { scans } = (await request.json()) as { scans: unknown[] };
      const errors = scans.map((_, index) => ({ index, error: 'scanned_at_in_future', detail: 'scannedAt is more than 5 minutes ahead of server time' }));
      return Response.json({ inserted: 0, skipped: 0, errors });
    });
    try {
      const result = await createProbeClient({ baseUrl: fake.url, token: 't' }).sendBulk([{ hostname: 'ahead.example.com', signals: {} }, scanOf('ahead.example.com', 1)]);
      expect(result.errors.map((e) => [e.index, e.error])).toEqual([
        [0, 'scanned_at_in_future'],
        [1, 'scanned_at_in_future'],
      ]);
    } finally {
      fake.stop();
    }
    expect(requests).toBe(2); // the scan given a time once more; the one with its own scannedAt never
  });
});

describe('a failed sendBulk', () => {
  test('names what earlier requests stored and the scans it did not store', async () => {
    let calls = 0;
    // The first request is stored; then the token is revoked.
    const fake = startFake(() =>
      calls++ === 0
        ? Response.json({ inserted: 2, skipped: 0, errors: [] })
        : Response.json({ error: 'invalid_token', detail: 'the probe token is unknown, rotated or revoked' }, { status: 401 }),
    );
    try {
      const error = await failure(createProbeClient({ baseUrl: fake.url, token: 't', maxBulkScans: 2 }).sendBulk(Array.from({ length: 5 }, (_, n) => scanOf('unsent.example.com', n))));
      expect(error).toMatchObject({ status: 401, error: 'invalid_token', result: { inserted: 2, skipped: 0, errors: [] }, unsent: [2, 3, 4] });
    } finally {
      fake.stop();
    }
  });
});

describe('server errors (5xx), network errors and timeouts', () => {
  function flakyServer(answers: (() => Response)[]) {
    let calls = 0;
    const fake = startFake(() => answers[Math.min(calls++, answers.length - 1)]!());
    return { ...fake, calls: () => calls };
  }

  test('5xx answers are retried with backoff (or their Retry-After) until one passes', async () => {
    const fake = flakyServer([
      () => Response.json({ error: 'unavailable', detail: 'maintenance' }, { status: 503, headers: { 'retry-after': '0' } }),
      () => new Response('<html>Bad Gateway</html>', { status: 502 }),
      () => new Response(null, { status: 204 }),
    ]);
    const { seen, options } = retriesOf({ retries: 2 });
    try {
      await createProbeClient({ baseUrl: fake.url, key: 'k', ...options }).send(scanOf('flaky.example.com', 1));
    } finally {
      fake.stop();
    }
    expect(fake.calls()).toBe(3);
    expect(seen.map((r) => [r.error.status, r.error.error])).toEqual([
      [503, 'unavailable'],
      [502, 'http_502'],
    ]);
    expect(seen[0]!.delay).toBe(0);
    expect(seen[1]!.delay).toBeGreaterThanOrEqual(500); // second backoff step: 500–1000 ms
    expect(seen[1]!.delay).toBeLessThanOrEqual(1000);
    expect(seen[1]!.error.detail).toBe('<html>Bad Gateway</html>');
  });

  test('a 5xx that persists surfaces after the retry budget with the server’s error and detail', async () => {
    const fake = flakyServer([() => Response.json({ error: 'persistence_failed', detail: 'the scan could not be stored; retry later' }, { status: 500, headers: { 'retry-after': '0' } })]);
    const { seen, options } = retriesOf({ retries: 2 });
    let error: ProbeError;
    try {
      error = await failure(createProbeClient({ baseUrl: fake.url, key: 'k', ...options }).sendBulk([scanOf('down.example.com', 1)]));
    } finally {
      fake.stop();
    }
    expect(fake.calls()).toBe(3);
    expect(seen).toHaveLength(2);
    expect(error).toMatchObject({ status: 500, error: 'persistence_failed', detail: 'the scan could not be stored; retry later' });
    expect(error.message).toBe('persistence_failed: the scan could not be stored; retry later');
  });

  test('a 4xx is not retried', async () => {
    const fake = flakyServer([() => Response.json({ error: 'invalid_field', detail: 'hostname must be a bare host name' }, { status: 400 })]);
    try {
      const error = await failure(createProbeClient({ baseUrl: fake.url, key: 'k' }).send(scanOf('x.example.com', 1)));
      expect(error).toMatchObject({ status: 400, error: 'invalid_field' });
    } finally {
      fake.stop();
    }
    expect(fake.calls()).toBe(1);
  });

  test('an unreachable server is retried, then a network_error with status 0', async () => {
    const fake = startFake(() => new Response(null, { status: 204 }));
    fake.stop();
    const { seen, options } = retriesOf({ retries: 1 });
    const error = await failure(createProbeClient({ baseUrl: fake.url, key: 'k', ...options }).send(scanOf('x.example.com', 1)));
    expect(seen).toHaveLength(1);
    expect(error).toMatchObject({ status: 0, error: 'network_error' });
  });

  test('a request that outlives the timeout fails with timeout', async () => {
    const fake = startFake(() => new Promise<Response>(() => {}));
    try {
      const error = await failure(createProbeClient({ baseUrl: fake.url, key: 'k', timeout: 200, retries: 0 }).send(scanOf('x.example.com', 1)));
      expect(error).toMatchObject({ status: 0, error: 'timeout' });
    } finally {
      fake.stop();
    }
  });
});

describe('typed errors from svc', () => {
  test('timestamp_out_of_window reports the measured clock skew, either way, and is not retried', async () => {
    const key = await open.key();
    const { seen, options } = retriesOf();
    // The skew is svc's Date header (cut to the second, so ±500 ms) less the signing time: it also
    // holds the time from signing to svc's answer, which a loaded machine stretches. Bun refreshes
    // the Date header once a second on a timer, which a busy server runs late, so the header can be
    // a second old and more (-982 ms was seen with a 377 ms test).
    const expectSkew = (skew: number | undefined, actual: number, tookMs: number) => {
      expect(skew! - actual).toBeGreaterThanOrEqual(-1_500 - tookMs);
      expect(skew! - actual).toBeLessThanOrEqual(500 + tookMs);
    };
    let started = performance.now();
    const behind = await failure(createProbeClient({ baseUrl: open.url, key, now: () => Date.now() - 10 * 60_000, ...options }).send(scanOf('skew.example.com', 1)));
    expect(behind).toMatchObject({ status: 401, error: 'timestamp_out_of_window' });
    expectSkew(behind.skew, 600_000, performance.now() - started);
    expect(behind.message).toEndWith(`(this clock is ${Math.round(behind.skew! / 1000)} s behind svc)`);
    started = performance.now();
    const ahead = await failure(createProbeClient({ baseUrl: open.url, key, now: () => Date.now() + 7 * 60_000 }).send(scanOf('skew.example.com', 2)));
    expectSkew(ahead.skew, -420_000, performance.now() - started);
    expect(ahead.message).toEndWith(`(this clock is ${Math.round(-ahead.skew! / 1000)} s ahead of svc)`);
    expect(seen).toEqual([]);
    expect(await open.count('skew.example.com')).toBe(0);
  });

  test('refusals carry svc’s error code and detail', async () => {
    const unknownKey = await failure(createProbeClient({ baseUrl: open.url, key: 'sk_live_unknown' }).send(scanOf('refused.example.com', 1)));
    expect(unknownKey).toMatchObject({ status: 401, error: 'invalid_api_key', detail: 'the API key is unknown, malformed or revoked', skew: undefined });
    const key = await open.key();
    const invalid = await failure(createProbeClient({ baseUrl: open.url, key }).send({ signals: {} } as unknown as TelemetryPayload));
    expect(invalid).toMatchObject({ status: 400, error: 'missing_field', detail: 'hostname is required', body: { error: 'missing_field', detail: 'hostname is required' } });
    expect(invalid.name).toBe('ProbeError');
  });
});
