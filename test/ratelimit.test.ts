import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { createTokenBuckets } from '../src/ratelimit/buckets.ts';
import { createTierLimiter } from '../src/ratelimit/tiers.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { addressKey } from '../src/lib/client-ip.ts';
import { requestPath } from '../src/lib/request-path.ts';
import { jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload, signedInit, tokenInit } from './helpers/probe.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(() => t?.close());

/** A test app whose requests come from the address in `peer.ip`. */
async function appFrom(peer: { ip: string }, env: Record<string, string> = {}) {
  const clock = fixedClock(NOW);
  t = await makeTestApp({ clock, env, peerAddress: () => peer.ip });
  return clock;
}

const anonymousScan = (extra: Record<string, string> = {}) => ({
  method: 'POST',
  body: JSON.stringify(scanPayload()),
  headers: { 'content-type': 'application/json', ...extra },
});

describe('spec §8 tier rate limits', () => {
  test('concurrent requests from several addresses: each request\'s peer address is asked once, and each address draws from its own bucket', async () => {
    let asked = 0;
    t = await makeTestApp({ clock: fixedClock(NOW), peerAddress: (request) => (asked++, request.headers.get('x-test-peer')) });
    const peers = ['198.18.9.1', '198.18.9.2', '198.18.9.3'];
    const sent = Array.from({ length: 30 }, (_, i) => t.request(TELEMETRY, anonymousScan({ 'x-test-peer': peers[i % 3]! })));
    const answers = await Promise.all(sent);
    expect(answers.map((response) => response.status)).toEqual(Array(30).fill(401)); // counted, then refused by authentication
    for (const [i, peer] of peers.entries()) {
      const remaining = answers.filter((_, j) => j % 3 === i).map((response) => Number(response.headers.get('ratelimit-remaining')));
      expect(remaining.toSorted((a, b) => b - a)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect((await t.request(TELEMETRY, anonymousScan({ 'x-test-peer': peer }))).status).toBe(429);
    }
    expect(asked).toBe(33);
  });

  test('an accepted signed scan (204) carries the agent tier\'s five rate-limit headers, and a take\'s decision has exactly its fields', async () => {
    await appFrom({ ip: '198.18.0.9' }, { SVC_RATE_AGENT: '1000' });
    const key = await t.keyWith('probe:scan');
    const accepted = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), NOW));
    expect(accepted.status).toBe(204);
    expect(Object.fromEntries([...accepted.headers].filter(([name]) => name.startsWith('ratelimit')))).toEqual({
      'ratelimit-policy': '"agent";q=1000;w=60',
      ratelimit: '"agent";r=999;t=1',
      'ratelimit-limit': '1000',
      'ratelimit-remaining': '999',
      'ratelimit-reset': '1',
    });
    const limiter = createTierLimiter(t.config, fixedClock(NOW));
    expect(limiter.take({ tier: 'agent', identity: 'a' })).toEqual({ tier: 'agent', allowed: true, limit: 1000, remaining: 999, retryAfterSeconds: 0, resetSeconds: 1 });
    expect(Object.keys(limiter.take({ tier: 'agent', identity: 'a' }, 5000)).sort()).toEqual(['allowed', 'limit', 'refusedBy', 'remaining', 'resetSeconds', 'retryAfterSeconds', 'tier']);
  });

  test('the 11th anonymous request within a minute gets 429 with the rate-limit body and headers', async () => {
    const peer = { ip: '198.18.0.1' };
    await appFrom(peer);
    for (let i = 0; i < 10; i++) {
      const response = await t.request(TELEMETRY, anonymousScan());
      expect(response.status).toBe(401); // counted, then refused by authentication
      expect(response.headers.get('ratelimit-remaining')).toBe(String(9 - i));
    }
    const limited = await t.request(TELEMETRY, anonymousScan());
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      error: 'rate_limited',
      detail: expect.any(String),
      tier: 'anonymous',
      limit: 10,
      retryAfter: 6,
    });
    expect(limited.headers.get('retry-after')).toBe('6');
    expect(limited.headers.get('ratelimit-policy')).toBe('"anonymous";q=10;w=60');
    expect(limited.headers.get('ratelimit')).toBe('"anonymous";r=0;t=60');
    expect(limited.headers.get('ratelimit-limit')).toBe('10');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit-reset')).toBe('60');
  });

  test('a request passes again once the bucket refills one token', async () => {
    const peer = { ip: '198.18.0.2' };
    const clock = await appFrom(peer);
    for (let i = 0; i < 10; i++) await t.request(TELEMETRY, anonymousScan());
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
    clock.advance(5_999);
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
    clock.advance(1);
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
  });

  test('anonymous buckets are per client address', async () => {
    const peer = { ip: '198.18.0.3' };
    await appFrom(peer);
    for (let i = 0; i < 10; i++) await t.request(TELEMETRY, anonymousScan());
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
    peer.ip = '198.18.0.4';
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
  });

  test('the limiter runs before authentication: token guessing is throttled at the anonymous rate', async () => {
    await appFrom({ ip: '198.18.0.5' });
    for (let i = 0; i < 10; i++) {
      expect((await t.request(TELEMETRY, tokenInit(`guess-${i}-${'x'.repeat(40)}`, scanPayload()))).status).toBe(401);
    }
    expect((await t.request(TELEMETRY, tokenInit(`guess-last-${'x'.repeat(40)}`, scanPayload()))).status).toBe(429);
  });

  test('the limiter runs before the body is read: an oversize body from a limited client gets 429, not 413', async () => {
    await appFrom({ ip: '198.18.0.6' });
    for (let i = 0; i < 10; i++) await t.request(TELEMETRY, anonymousScan());
    const huge = 'x'.repeat(t.config.maxBodyBytes + 1);
    expect((await t.request(TELEMETRY, { method: 'POST', body: huge })).status).toBe(429);
  });

  test('every probe route is limited; an unknown /api/v1/probe/* path is 404 and costs no token', async () => {
    await appFrom({ ip: '198.18.0.7' });
    for (let i = 0; i < 11; i++) expect((await t.request('/api/v1/probe/nothing-here', { method: 'GET' })).status).toBe(404);
    for (const path of [TELEMETRY, '/api/v1/probe/scan-bulk']) {
      for (let i = 0; i < 5; i++) expect((await t.request(path, { method: 'POST' })).status).toBe(401);
    }
    expect((await t.request(TELEMETRY, { method: 'POST' })).status).toBe(429);
    expect((await t.request('/api/v1/probe/scan-bulk', { method: 'POST' })).status).toBe(429);
  });

  test('a verified lead gets the authed tier (50/min) keyed by lead, not by address', async () => {
    const peer = { ip: '198.18.0.8' };
    await appFrom(peer);
    const { apiToken } = await t.leads.create('fast@example.com', true);
    for (let i = 0; i < 50; i++) {
      peer.ip = `198.18.1.${i}`;
      expect((await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()))).status).toBe(204);
    }
    const limited = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ tier: 'authed', limit: 50 });
  });

  test('an unverified lead is limited at the anonymous tier (10/min)', async () => {
    await appFrom({ ip: '198.18.0.9' });
    const { apiToken } = await t.leads.create('slow@example.com');
    for (let i = 0; i < 10; i++) expect((await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()))).status).toBe(204);
    const limited = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ tier: 'anonymous', limit: 10 });
  });

  test('a probe:scan key gets the agent tier with the limit from SVC_RATE_AGENT', async () => {
    await appFrom({ ip: '198.18.0.10' }, { SVC_RATE_AGENT: '3' });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    for (let i = 0; i < 3; i++) expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    const limited = await t.request(TELEMETRY, signedInit(key, body, NOW));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ tier: 'agent', limit: 3, retryAfter: 20 });
  });

  test('a valid key without probe:scan is limited at the anonymous tier, keyed by address (not the agent tier)', async () => {
    const peer = { ip: '198.18.0.12' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '2', SVC_RATE_AGENT: '100' });
    const key = await t.keyWith('dashboard:read');
    const body = JSON.stringify(scanPayload());
    for (let i = 0; i < 2; i++) expect(await (await t.request(TELEMETRY, signedInit(key, body, NOW))).json()).toMatchObject({ error: 'insufficient_scope' });
    const limited = await t.request(TELEMETRY, signedInit(key, body, NOW));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ tier: 'anonymous', limit: 2 });
    // The bucket is the address's: another address with the same key starts afresh.
    peer.ip = '198.18.0.13';
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(401);
  });

  test('a revoked probe:scan key is limited at the anonymous tier', async () => {
    await appFrom({ ip: '198.18.0.14' }, { SVC_RATE_ANONYMOUS: '1', SVC_RATE_AGENT: '100' });
    const { key, record } = await t.keys.create({ scopes: ['probe:scan'] });
    await t.keys.revoke(record.id);
    const body = JSON.stringify(scanPayload());
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(401);
    expect(await (await t.request(TELEMETRY, signedInit(key, body, NOW))).json()).toMatchObject({ tier: 'anonymous', limit: 1 });
  });

  test('behind a trusted proxy, a client cannot pick a fresh bucket by prepending X-Forwarded-For entries', async () => {
    await appFrom({ ip: '10.0.0.1' }, { SVC_TRUST_PROXY: '1', SVC_RATE_ANONYMOUS: '2' });
    const from = (xff: string) => t.request(TELEMETRY, anonymousScan({ 'x-forwarded-for': xff }));
    expect((await from('203.0.113.9')).status).toBe(401);
    expect((await from('198.51.100.1, 203.0.113.9')).status).toBe(401);
    expect((await from('198.51.100.2, 203.0.113.9')).status).toBe(429);
    expect((await from('203.0.113.10')).status).toBe(401);
  });

  test('tier limits come from configuration (SVC_RATE_ANONYMOUS)', async () => {
    await appFrom({ ip: '198.18.0.11' }, { SVC_RATE_ANONYMOUS: '2' });
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    expect(await (await t.request(TELEMETRY, anonymousScan())).json()).toMatchObject({ tier: 'anonymous', limit: 2, retryAfter: 30 });
  });
});

describe('DESIGN §5 public lead sign-up is rate limited as anonymous', () => {
  test('the 11th sign-up from one address within a minute gets 429', async () => {
    await appFrom({ ip: '198.18.0.12' });
    for (let i = 0; i < 10; i++) {
      expect((await t.request('/api/v1/public/leads', jsonRequest('POST', { email: `u${i}@example.com` }))).status).toBe(201);
    }
    const limited = await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'u10@example.com' }));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ error: 'rate_limited', tier: 'anonymous', limit: 10, detail: 'the anonymous tier allows 10 sign-ups per minute; retry in 6 s' });
    expect(limited.headers.get('retry-after')).toBe('6');
  });

  test('sign-ups and anonymous scans from one address draw from separate buckets', async () => {
    await appFrom({ ip: '198.18.0.13' });
    for (let i = 0; i < 10; i++) await t.request(TELEMETRY, anonymousScan());
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
    expect((await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'apart@example.com' }))).status).toBe(201);
  });
});

describe('token buckets (DESIGN §5, §7)', () => {
  test('capacity is the per-minute limit and refill is continuous', () => {
    const clock = fixedClock(NOW);
    const buckets = createTokenBuckets(clock, 10);
    for (let i = 0; i < 60; i++) expect(buckets.take('k', 60).allowed).toBe(true);
    expect(buckets.take('k', 60).allowed).toBe(false);
    clock.advance(500);
    expect(buckets.take('k', 60).allowed).toBe(false);
    clock.advance(500);
    expect(buckets.take('k', 60)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test('an idle bucket refills up to its capacity, never beyond', () => {
    const clock = fixedClock(NOW);
    const buckets = createTokenBuckets(clock, 10);
    for (let i = 0; i < 5; i++) buckets.take('idle', 5);
    clock.advance(60 * 60_000);
    expect(buckets.take('idle', 5)).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 12 });
    for (let i = 0; i < 4; i++) expect(buckets.take('idle', 5).allowed).toBe(true);
    expect(buckets.take('idle', 5).allowed).toBe(false);
  });

  test('taking N tokens is all-or-nothing', () => {
    const clock = fixedClock(NOW);
    const buckets = createTokenBuckets(clock, 10);
    expect(buckets.take('bulk', 10, 7)).toMatchObject({ allowed: true, remaining: 3 });
    expect(buckets.take('bulk', 10, 4)).toMatchObject({ allowed: false, remaining: 3, retryAfterSeconds: 6 });
    expect(buckets.take('bulk', 10, 3)).toMatchObject({ allowed: true, remaining: 0 });
  });

  test('an empty bucket key is refused', () => {
    expect(() => createTokenBuckets(fixedClock(NOW), 10).take('', 10)).toThrow();
  });

  test('a new key replaces an idle, full bucket even behind many buckets in use (least recently used first)', () => {
    const clock = fixedClock(NOW);
    const buckets = createTokenBuckets(clock, 50);
    for (let i = 0; i < 40; i++) buckets.take(`busy-${i}`, 10);
    for (let i = 0; i < 10; i++) buckets.take(`idle-${i}`, 10);
    clock.advance(6_000); // every bucket is full again; the busy ones are used once more
    for (let i = 0; i < 40; i++) buckets.take(`busy-${i}`, 10, 5);
    for (let i = 0; i < 10; i++) expect(buckets.take(`new-${i}`, 10).allowed).toBe(true);
    expect(buckets.take('one-more', 10).refusedBy).toBe('table-full');
    for (let i = 0; i < 40; i++) expect(buckets.take(`busy-${i}`, 10).remaining).toBe(4);
  });

  test('a flood from 100,000 distinct anonymous addresses keeps the limiter under its cap', () => {
    const cap = 10_000;
    const clock = fixedClock(NOW);
    const limiter = createTierLimiter(limiterSettings({ maxBuckets: cap }), clock);
    for (let i = 0; i < 100_000; i++) {
      if (i % 2_000 === 0) clock.advance(1_000);
      limiter.take(limiter.anonymous(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`));
    }
    expect(limiter.size).toBeLessThanOrEqual(cap);
    expect(limiter.size).toBeGreaterThanOrEqual(cap / 2);
  }, 30_000);

  test('a bucket in use survives eviction; only buckets that are full again are replaced', () => {
    const clock = fixedClock(NOW);
    const buckets = createTokenBuckets(clock, 4);
    for (let i = 0; i < 10; i++) buckets.take('active', 10);
    buckets.take('idle', 10, 5);
    buckets.take('a', 10);
    buckets.take('b', 10);
    // The table is full of buckets below capacity: a new key is refused, none is reset.
    expect(buckets.take('c', 10)).toMatchObject({ allowed: false, refusedBy: 'table-full', retryAfterSeconds: 60 });
    clock.advance(6_000); // 'a' and 'b' are full again; 'idle' (6 tokens) and 'active' (1) are not
    expect(buckets.take('c', 10).allowed).toBe(true);
    expect(buckets.take('d', 10).allowed).toBe(true);
    expect(buckets.take('e', 10).refusedBy).toBe('table-full');
    expect(buckets.take('active', 10).remaining).toBe(0); // remembered: one token refilled, taken
    expect(buckets.take('idle', 10).remaining).toBe(5);
    expect(buckets.size).toBe(4);
  });
});

/** Limiter settings as configured by default, with some of the anonymous tier's settings overridden. */
function limiterSettings(anonymousLimits: Partial<Config['anonymousLimits']> = {}, rates: Partial<Config['rates']> = {}) {
  const config = loadConfig({}, {});
  return { rates: { ...config.rates, ...rates }, anonymousLimits: { ...config.anonymousLimits, ...anonymousLimits } };
}

describe('anonymous clients cannot dodge their bucket (issue 11)', () => {
  test('IPv6 clients are keyed by their /64, IPv4 by address, IPv4-mapped IPv6 as IPv4', () => {
    const cases: [address: string, ipv6PrefixBits: number, key: string][] = [
      ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', 64, '2001:db8:1:2::/64'],
      ['2001:db8:1:2::1', 64, '2001:db8:1:2::/64'],
      ['2001:DB8:1:2:0:0:0:ffff', 64, '2001:db8:1:2::/64'],
      ['2001:db8:1:3::1', 64, '2001:db8:1:3::/64'],
      ['::1', 64, '0:0:0:0::/64'],
      ['fe80::1%eth0', 64, 'fe80:0:0:0::/64'],
      ['64:ff9b::198.51.100.7', 96, '64:ff9b:0:0:0:0::/96'],
      ['2001:db8:abcd:12ff::1', 56, '2001:db8:abcd:1200::/56'],
      ['2001:db8:abcd:12ff::1', 48, '2001:db8:abcd::/48'],
      ['2001:db8::7', 128, '2001:db8:0:0:0:0:0:7/128'],
      ['198.51.100.7', 64, '198.51.100.7'],
      ['::ffff:198.51.100.7', 64, '198.51.100.7'],
      ['::FFFF:c633:6407', 64, '198.51.100.7'],
    ];
    for (const [address, bits, key] of cases) expect(addressKey(address, bits)).toBe(key);
  });

  test('rotating socket addresses inside one IPv6 /64 draws from one anonymous bucket', async () => {
    const peer = { ip: '2001:db8:77:1::1' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '3' });
    for (let i = 0; i < 3; i++) {
      peer.ip = `2001:db8:77:1:${(i * 7919).toString(16)}:${i}:beef:${i + 1}`;
      expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    }
    peer.ip = '2001:db8:77:1:ffff:ffff:ffff:fffe';
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
    peer.ip = '2001:db8:77:2::1'; // the next /64 is another subscriber
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
  });

  test('rotating trusted X-Forwarded-For addresses inside one /64 shares the bucket too, and sign-ups are keyed the same way', async () => {
    await appFrom({ ip: '10.0.0.1' }, { SVC_TRUST_PROXY: '1', SVC_RATE_ANONYMOUS: '2' });
    const from = (xff: string) => t.request(TELEMETRY, anonymousScan({ 'x-forwarded-for': xff }));
    expect((await from('2001:db8:5:6::a')).status).toBe(401);
    expect((await from('2001:db8:5:6::b')).status).toBe(401);
    expect((await from('2001:db8:5:6:1:2:3:4')).status).toBe(429);
    const signUp = (xff: string, email: string) =>
      t.request('/api/v1/public/leads', { ...jsonRequest('POST', { email }), headers: { 'content-type': 'application/json', 'x-forwarded-for': xff } });
    expect((await signUp('2001:db8:9:9::1', 'one@example.com')).status).toBe(201);
    expect((await signUp('2001:db8:9:9::2', 'two@example.com')).status).toBe(201);
    expect((await signUp('2001:db8:9:9::3', 'three@example.com')).status).toBe(429);
  });

  test('the IPv6 prefix length comes from SVC_RATE_IPV6_PREFIX', async () => {
    const peer = { ip: '2001:db8:1:100::1' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '1', SVC_RATE_IPV6_PREFIX: '48' });
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    peer.ip = '2001:db8:1:200::1'; // another /64, same /48
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
  });

  test('an IPv4 client on a dual-stack socket (IPv4-mapped IPv6) shares its IPv4 bucket', async () => {
    const peer = { ip: '198.18.5.5' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '2' });
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    peer.ip = '::ffff:198.18.5.5';
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(401);
    peer.ip = '::ffff:c612:505';
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
  });

  test('filling the bucket table with 100,000+ fresh addresses never hands a throttled client a fresh bucket', () => {
    const clock = fixedClock(NOW);
    const limiter = createTierLimiter(limiterSettings({ globalPerMinute: 10_000_000 }), clock);
    const throttled = limiter.anonymous('2001:db8:bad::1');
    for (let i = 0; i < 10; i++) limiter.take(throttled);
    expect(limiter.take(throttled).allowed).toBe(false);
    let refusedFresh = 0;
    for (let i = 0; i < 150_000; i++) {
      const decision = limiter.take(limiter.anonymous(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`));
      if (!decision.allowed) {
        expect(decision.refusedBy).toBe('table-full');
        refusedFresh++;
      }
    }
    expect(limiter.size).toBe(100_000);
    expect(refusedFresh).toBe(50_001); // the table was full of buckets in use: new keys wait, none is reset
    expect(limiter.take(throttled)).toMatchObject({ allowed: false, refusedBy: 'bucket' });
    // Within a minute every bucket is full again; then fresh clients replace them, losing nothing.
    clock.advance(60_000);
    expect(limiter.take(limiter.anonymous('2001:db8:ffff::1')).allowed).toBe(true);
  }, 30_000);

  test('a full bucket table answers new clients 429 while throttled clients stay throttled (SVC_RATE_BUCKETS)', async () => {
    const peer = { ip: '198.18.9.1' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '2', SVC_RATE_BUCKETS: '100' });
    for (let i = 0; i < 2; i++) await t.request(TELEMETRY, anonymousScan());
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      peer.ip = `203.0.${i >> 8}.${i & 255}`;
      statuses.push((await t.request(TELEMETRY, anonymousScan())).status);
    }
    expect(statuses.filter((s) => s === 401).length).toBe(99);
    const refused = await t.request(TELEMETRY, anonymousScan());
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'rate_limited', detail: expect.stringContaining('too many clients are rate limited at once') });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    peer.ip = '198.18.9.1';
    expect((await t.request(TELEMETRY, anonymousScan())).status).toBe(429);
  });

  test('the anonymous tier as a whole has a ceiling (SVC_RATE_ANONYMOUS_GLOBAL): rotating across many /64s ends in 429s', async () => {
    const peer = { ip: '2001:db8::1' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '5', SVC_RATE_ANONYMOUS_GLOBAL: '20' });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      peer.ip = `2001:db8:${i.toString(16)}::1`;
      statuses.push((await t.request(TELEMETRY, anonymousScan())).status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    const refused = await t.request(TELEMETRY, anonymousScan());
    expect(await refused.json()).toMatchObject({ tier: 'anonymous', limit: 20, detail: 'all anonymous clients together may make 20 scans per minute; retry in 3 s' });
    // Agents and verified leads are not held by the anonymous ceiling.
    const key = await t.keyWith('probe:scan');
    expect((await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), NOW))).status).toBe(204);
  });

  test('a request refused by the anonymous ceiling costs the client no token of its own', () => {
    const clock = fixedClock(NOW);
    const limiter = createTierLimiter(limiterSettings({ globalPerMinute: 2 }, { anonymous: 2 }), clock);
    for (let i = 0; i < 2; i++) expect(limiter.take(limiter.anonymous('198.18.0.1')).allowed).toBe(true);
    for (let i = 0; i < 2; i++) expect(limiter.take(limiter.anonymous('198.18.0.2'))).toMatchObject({ allowed: false, refusedBy: 'ceiling' });
    clock.advance(30_000); // the ceiling refills one token; 198.18.0.2 still holds both of its own
    expect(limiter.take(limiter.anonymous('198.18.0.2'))).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('limits and guards hold for every spelling of a path (issues 11 and 27): they run on the route the router matched', () => {
  test('each request\'s own path, asked in any order and again (the last answer is kept per request, never shared)', () => {
    const a = new Request('http://localhost/API/v1//probe/telemetry/?x=1');
    const b = new Request('http://localhost/api/v1/webhooks/platform-a');
    const c = new Request('http://localhost');
    for (let i = 0; i < 2; i++) {
      expect(requestPath(a)).toBe('/API/v1//probe/telemetry/');
      expect(requestPath(b)).toBe('/api/v1/webhooks/platform-a');
      expect(requestPath(a)).toBe('/API/v1//probe/telemetry/');
      expect(requestPath(c)).toBe('/');
    }
  });

  test('a trailing slash (or any other spelling) does not dodge the sign-up limit: 50 tries create 10 leads', async () => {
    await appFrom({ ip: '198.18.7.1' });
    const spellings = ['/api/v1/public/leads/', '/api/v1/public/leads', '/api/v1/public/leads//', '/api/v1//public/leads', '/API/v1/public/%6ceads'];
    let created = 0;
    for (let i = 0; i < 50; i++) {
      const response = await t.request(spellings[i % spellings.length]!, jsonRequest('POST', { email: `slash${i}@example.com` }));
      expect([201, 404, 429]).toContain(response.status);
      if (response.status === 201) created++;
    }
    expect(created).toBeLessThanOrEqual(10);
    expect((await t.request('/api/v1/public/leads/', jsonRequest('POST', { email: 'last@example.com' }))).status).toBe(429);
    expect((await t.leads.list({}, null, 500)).items.length).toBe(created);
  });

  test('the probe limit holds for every spelling of a probe path: a spelling the router routes is limited, any other is 404', async () => {
    await appFrom({ ip: '198.18.7.2' }, { SVC_RATE_ANONYMOUS: '2' });
    for (const path of [`${TELEMETRY}/`, TELEMETRY]) expect((await t.request(path, anonymousScan())).status).toBe(401);
    expect((await t.request(`${TELEMETRY}/`, anonymousScan())).status).toBe(429);
    for (const path of [`${TELEMETRY}//`, '/api/v1//probe/telemetry', '/api/v1/%70robe/telemetry', '/API/V1/PROBE/TELEMETRY']) {
      expect({ path, status: (await t.request(path, anonymousScan())).status }).toEqual({ path, status: 404 });
    }
  });

  test('the admin and dashboard guards hold for every spelling of their paths: a spelling the router routes is 401, any other 404', async () => {
    await appFrom({ ip: '198.18.7.3' });
    for (const path of ['/api/v1/admin/keys', '/api/v1/admin/keys/', '/api/v1/dashboard/scans/']) {
      expect({ path, status: (await t.request(path)).status }).toEqual({ path, status: 401 });
    }
    for (const path of ['/api/v1//admin/keys', '/api/v1/%61dmin/keys', '/API/v1/admin/keys', '/api/v1/admin', '/api/v1/%64ashboard/scans']) {
      expect({ path, status: (await t.request(path)).status }).toEqual({ path, status: 404 });
    }
  });
});
