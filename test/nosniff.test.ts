import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload } from './helpers/probe.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

// Browsers must never sniff an answer into another type (an error body or a user-influenced JSON or
// text answer run as a script or page): every response says so, whatever produced it.
let t: TestApp;
let storeId: string;
beforeAll(async () => {
  t = await makeTestApp({ env: { SVC_RATE_ANONYMOUS: '1', SVC_MAX_BODY_BYTES: '2048', SVC_PROBE_CORS_ORIGINS: 'https://scanner.example' } });
  storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
  await syncProduct(t, storeId, realisticProduct('platform-a', 101, 'acme.myplatform-a.com'));
  expect((await enrich(t, storeId, '101')).status).toBe(200);
});
afterAll(() => t.close());

describe('every response carries X-Content-Type-Options: nosniff', () => {
  const firstAsset = async (path: string) => (await (await t.request(path)).text()).match(/(?:src|href)="(\/assets\/[^"]+)"/)![1]!;
  const cases: [string, () => Promise<Response>, number][] = [
    ['the health check', () => t.request('/healthz'), 200],
    ['an unknown route (404)', () => t.request('/no/such/route'), 404],
    ['an admin call without a key (401, before routing)', () => t.request('/api/v1/admin/keys'), 401],
    ['an admin answer', async () => t.request('/api/v1/admin/keys', { headers: bearer(await t.keyWith('admin')) }), 200],
    ['a declared oversize body (413, before reading it)', () => t.request('/api/v1/public/leads', { method: 'POST', body: 'x'.repeat(4096), headers: { 'content-type': 'application/json' } }), 413],
    ['a malformed body (400)', async () => t.request('/api/v1/admin/keys', { method: 'POST', body: '{"scopes":', headers: { ...bearer(await t.keyWith('admin')), 'content-type': 'application/json' } }), 400],
    ['a probe preflight', () => t.request(TELEMETRY, { method: 'OPTIONS', headers: { origin: 'https://scanner.example', 'access-control-request-method': 'POST' } }), 204],
    ['an anonymous scan', () => t.request(TELEMETRY, jsonRequest('POST', scanPayload())), 401],
    ['a rate-limited scan (429)', () => t.request(TELEMETRY, jsonRequest('POST', scanPayload())), 429],
    ['the widget script', () => t.request('/embed.js'), 200],
    ['the landing page', () => t.request('/'), 200],
    ['the console shell', () => t.request('/console'), 200],
    ['a static asset', async () => t.request(await firstAsset('/console')), 200],
    ['a signal (JSON-LD)', () => t.request('/api/v1/platform-a/products/101.jsonld'), 200],
    ['a signal (Markdown)', () => t.request('/api/v1/platform-a/products/101.md'), 200],
    ['an unknown signal (404)', () => t.request('/api/v1/platform-a/products/999.jsonld'), 404],
    ['robots.txt', () => t.request('/robots.txt'), 200],
    ['the badge', () => t.request('/api/v1/public/probe/badge?domain=example.com'), 200],
    ['the public FAQ endpoint refusing a request (403)', () => t.request('/api/v1/public/faqs?type=product&ref=x'), 403],
    ['a webhook refused (401)', () => t.request('/api/v1/platform-b/webhooks', { method: 'POST', body: '{}' }), 401],
  ];
  for (const [name, send, status] of cases) {
    test(name, async () => {
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    });
  }
});
