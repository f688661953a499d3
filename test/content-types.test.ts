import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { scanPayload, TELEMETRY } from './helpers/probe.ts';
import { addFaq, enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

// One Content-Type per kind of answer: JSON (and JSON-LD) answers name their charset as Bun's
// Response.json does, `application/json;charset=utf-8`, whichever code path built them (the app's
// routes, its error answers, the hot public GETs with their prebuilt headers, served files).
let t: TestApp;
let widgetKey: string;
beforeAll(async () => {
  t = await makeTestApp();
  const storeId = await seedStore(t, 'platform-a', 'types.myplatform-a.com');
  await syncProduct(t, storeId, realisticProduct('platform-a', 101, 'types.myplatform-a.com'));
  expect((await enrich(t, storeId, '101')).status).toBe(200);
  await addFaq(t, { storeId, entityType: 'product', entityRef: '101', question: 'Does it fit?', answer: '<p>Yes.</p>', status: 'approved' });
  widgetKey = (await t.keys.create({ name: 'widget', scopes: ['products:read'], allowedDomains: ['www.types.test'], storeId })).key;
  const lead = await t.leads.create('types@example.com', true);
  const scan = await t.request(TELEMETRY, { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': lead.apiToken }, body: JSON.stringify(scanPayload({ hostname: 'www.types.test' })) });
  expect(scan.status).toBe(204);
});
afterAll(() => t.close());

describe('every JSON answer names its charset (application/json;charset=utf-8)', () => {
  const admin = async () => ({ headers: bearer(await t.keyWith('admin')) });
  const cases: [string, string, () => RequestInit | Promise<RequestInit>, string][] = [
    ['the health check', '/healthz', () => ({}), 'application/json;charset=utf-8'],
    ['an error (404)', '/no/such/route', () => ({}), 'application/json;charset=utf-8'],
    ['an admin answer', '/api/v1/admin/keys', admin, 'application/json;charset=utf-8'],
    ['the OpenAPI document', '/openapi.json', () => ({}), 'application/json;charset=utf-8'],
    ['the OpenAPI document gzipped', '/openapi.json', () => ({ headers: { 'accept-encoding': 'gzip' } }), 'application/json;charset=utf-8'],
    ['a .jsonld signal', '/api/v1/platform-a/products/101.jsonld', () => ({}), 'application/ld+json;charset=utf-8'],
    ['a .llm signal', '/api/v1/platform-a/products/101.llm', () => ({}), 'application/json;charset=utf-8'],
    ['a .meta signal', '/api/v1/platform-a/products/101.meta', () => ({}), 'application/json;charset=utf-8'],
    ['an unknown signal (404)', '/api/v1/platform-a/products/999.llm', () => ({}), 'application/json;charset=utf-8'],
    ['public FAQs', '/api/v1/public/faqs?type=product&ref=101', () => ({ headers: { 'x-api-key': widgetKey, origin: 'https://www.types.test' } }), 'application/json;charset=utf-8'],
    ['the badge as JSON', '/api/v1/public/probe/badge?domain=www.types.test&format=json', () => ({}), 'application/json;charset=utf-8'],
    ['the badge as JSON of an unscanned host', '/api/v1/public/probe/badge?domain=unseen.test&format=json', () => ({}), 'application/json;charset=utf-8'],
    ['the badge refusing a format (400)', '/api/v1/public/probe/badge?domain=www.types.test&format=png', () => ({}), 'application/json;charset=utf-8'],
  ];
  for (const [name, path, init, type] of cases) {
    test(name, async () => {
      const res = await t.request(path, await init());
      expect(res.headers.get('content-type')).toBe(type);
      // The body is what the type says: UTF-8 JSON.
      const bytes = new Uint8Array(await res.arrayBuffer());
      const text = new TextDecoder('utf-8', { fatal: true }).decode(res.headers.get('content-encoding') === 'gzip' ? Bun.gunzipSync(bytes) : bytes);
      expect(() => JSON.parse(text)).not.toThrow();
    });
  }
});
