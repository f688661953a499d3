import { afterEach, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload, tokenInit } from './helpers/probe.ts';

const SCANNER = 'https://scanner.example.com';
let t: TestApp;
afterEach(() => t.close());

const preflight = (origin: string) =>
  t.request(TELEMETRY, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-probe-token' } });

describe('CORS on the probe routes (SVC_PROBE_CORS_ORIGINS)', () => {
  test('off by default: no grant, and a preflight is not answered', async () => {
    t = await makeTestApp();
    const res = await preflight(SCANNER);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const { apiToken } = await t.leads.create('cors@example.com');
    const post = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload(), { origin: SCANNER }));
    expect(post.status).toBe(204);
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a preflight allows POST with X-Probe-Token (never the signing headers); a listed origin gets the grant on every answer', async () => {
    t = await makeTestApp({ env: { SVC_PROBE_CORS_ORIGINS: SCANNER, SVC_RATE_ANONYMOUS: '2' } });
    const res = await preflight(SCANNER);
    expect(res.status).toBe(204);
    expect(Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')))).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'Content-Type, X-Probe-Token',
      'access-control-max-age': '600',
    });
    // Preflights cost no rate-limit token.
    for (let i = 0; i < 5; i++) expect((await preflight(SCANNER)).status).toBe(204);

    const { apiToken } = await t.leads.create('cors@example.com');
    const ok = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload(), { origin: SCANNER }));
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(SCANNER);
    const unauthorized = await t.request(TELEMETRY, tokenInit('not-a-token'.repeat(5), scanPayload(), { origin: SCANNER }));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(SCANNER);
    const limited = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload(), { origin: SCANNER }));
    expect(limited.status).toBe(429); // the page can read the 429 and its Retry-After
    expect(limited.headers.get('access-control-allow-origin')).toBe(SCANNER);
  });

  test('a preflight answers the same for listed and unknown origins (the request decides); an origin not listed gets no grant; other routes are untouched', async () => {
    t = await makeTestApp({ env: { SVC_PROBE_CORS_ORIGINS: SCANNER } });
    const answerOf = async (res: Response) => ({ status: res.status, headers: Object.fromEntries([...res.headers].filter(([name]) => name !== 'x-request-id')), body: await res.text() });
    const listed = await answerOf(await preflight(SCANNER));
    for (const origin of ['https://evil.example', 'https://scanner.example.com.evil.example', 'null']) expect(await answerOf(await preflight(origin))).toEqual(listed);
    const { apiToken } = await t.leads.create('cors@example.com');
    const post = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload(), { origin: 'https://evil.example' }));
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
    const health = await t.request('/healthz', { headers: { origin: SCANNER } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('* grants any origin, as * (lead tokens are not cookies: no credentials mode)', async () => {
    t = await makeTestApp({ env: { SVC_PROBE_CORS_ORIGINS: '*' } });
    expect((await preflight('https://anywhere.example')).headers.get('access-control-allow-origin')).toBe('*');
  });
});
