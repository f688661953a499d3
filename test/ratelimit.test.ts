import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { createTokenBuckets } from '../src/ratelimit/buckets.ts';
import { createTierLimiter } from '../src/ratelimit/tiers.ts';
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

  test('every /api/v1/probe/* route is limited, including unknown ones', async () => {
    await appFrom({ ip: '198.18.0.7' });
    for (let i = 0; i < 10; i++) expect((await t.request('/api/v1/probe/nothing-here', { method: 'GET' })).status).toBe(404);
    expect((await t.request('/api/v1/probe/nothing-here', { method: 'GET' })).status).toBe(429);
  });

  test('a verified lead gets the authed tier (50/min) keyed by lead, not by address', async () => {
    const peer = { ip: '198.18.0.8' };
    await appFrom(peer);
    const { apiToken } = t.leads.create('fast@example.com', true);
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
    const { apiToken } = t.leads.create('slow@example.com');
    for (let i = 0; i < 10; i++) expect((await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()))).status).toBe(204);
    const limited = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ tier: 'anonymous', limit: 10 });
  });

  test('a probe:scan key gets the agent tier with the limit from SVC_RATE_AGENT', async () => {
    await appFrom({ ip: '198.18.0.10' }, { SVC_RATE_AGENT: '3' });
    const key = t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    for (let i = 0; i < 3; i++) expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    const limited = await t.request(TELEMETRY, signedInit(key, body, NOW));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ tier: 'agent', limit: 3, retryAfter: 20 });
  });

  test('a valid key without probe:scan is limited at the anonymous tier, keyed by address (not the agent tier)', async () => {
    const peer = { ip: '198.18.0.12' };
    await appFrom(peer, { SVC_RATE_ANONYMOUS: '2', SVC_RATE_AGENT: '100' });
    const key = t.keyWith('dashboard:read');
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
    const { key, record } = t.keys.create({ scopes: ['probe:scan'] });
    t.keys.revoke(record.id);
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

  test('a flood from 1,000,000 distinct anonymous addresses keeps the limiter under its cap', () => {
    const cap = 50_000;
    const limiter = createTierLimiter({ anonymous: 10, authed: 50, agent: 1000 }, fixedClock(NOW), cap);
    for (let i = 0; i < 1_000_000; i++) {
      limiter.take({ tier: 'anonymous', identity: `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
    }
    expect(limiter.size).toBeLessThanOrEqual(cap);
    expect(limiter.size).toBeGreaterThanOrEqual(cap / 2);
    // A million limiter calls: seconds of CPU on a shared 2-core machine.
  }, 30_000);

  test('a bucket in use survives eviction while idle ones are dropped', () => {
    const clock = fixedClock(NOW);
    const buckets = createTokenBuckets(clock, 4);
    for (let i = 0; i < 10; i++) buckets.take('active', 10);
    buckets.take('idle', 10);
    for (const other of ['a', 'b', 'c', 'd', 'e']) {
      buckets.take(other, 10);
      expect(buckets.take('active', 10).allowed).toBe(false); // still empty: remembered
    }
    expect(buckets.take('idle', 10).remaining).toBe(9); // forgotten: a full bucket again
    expect(buckets.size).toBeLessThanOrEqual(4);
  });
});
