import { afterEach, beforeEach, expect, test } from 'bun:test';
import jsonld from 'jsonld';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { addFaq, enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

/**
 * The context `https://schema.org` resolves to, reduced to what decides expansion of svc's output:
 * the published context's `@vocab` and, as there, `@type: @id` for URL-valued properties (the
 * published file declares every schema.org term; with the vocabulary, each expands the same way).
 */
const SCHEMA_ORG_CONTEXT = {
  '@context': {
    '@vocab': 'http://schema.org/',
    schema: 'http://schema.org/',
    url: { '@id': 'schema:url', '@type': '@id' },
    image: { '@id': 'schema:image', '@type': '@id' },
  },
};

/** No network in tests: the loader answers only for schema.org's context and fails for anything else. */
const documentLoader = async (url: string) => {
  if (url.replace(/\/$/, '') === 'https://schema.org') return { contextUrl: undefined, documentUrl: url, document: SCHEMA_ORG_CONTEXT };
  throw new Error(`unexpected remote document ${url}`);
};

/** Every (key, leaf value) pair of a compacted document, so expansion can be checked to keep them all. */
function leaves(node: unknown, key = '', out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => leaves(item, key, out));
  else if (node && typeof node === 'object') {
    for (const [k, value] of Object.entries(node)) if (k !== '@context') leaves(value, k, out);
  } else out.push(`${key}=${String(node)}`);
  return out;
}

/** The same pairs read back from the expanded form (`@value`/`@id` under full IRIs, `@type` arrays). */
function expandedLeaves(node: unknown, key = '', out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => expandedLeaves(item, key, out));
  else if (node && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if ('@value' in record) out.push(`${key}=${String(record['@value'])}`);
    else {
      if (typeof record['@id'] === 'string' && Object.keys(record).length === 1) out.push(`${key}=${record['@id']}`);
      else if (typeof record['@id'] === 'string') out.push(`@id=${record['@id']}`);
      for (const [k, value] of Object.entries(record)) {
        if (k === '@id') continue;
        if (k === '@type') (value as string[]).forEach((type) => out.push(`@type=${type.replace('http://schema.org/', '')}`));
        else expandedLeaves(value, k.replace('http://schema.org/', ''), out);
      }
    }
  }
  return out;
}

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp({ clock: fixedClock(Date.parse('2026-02-01T12:00:00Z')), env: { SVC_BASE_URL: 'https://svc.example' } });
});
afterEach(() => t.close());

const SETTINGS = {
  itemCondition: 'refurbished',
  returnPolicy: { countries: ['GB'], window: 'finite', days: 14, fees: 'shipping_fee', shippingFee: '3.50', method: 'store' },
  shipping: [{ countries: ['GB', 'IE'], price: '4.99', handlingDays: { min: 1, max: 1 }, transitDays: { min: 1, max: 3 } }],
};

for (const [platform, ref] of [['platform-a', 'acme.myplatform-a.com'], ['platform-b', 'abc123'], ['platform-c', 'https://shop.example']] as const) {
  for (const kind of ['multi', 'single'] as const) {
    test(`${platform}, ${kind}-variant product with store settings and FAQs: JSON-LD expansion (safe mode) drops nothing`, async () => {
      const storeId = await seedStore(t, platform, ref, 'GBP');
      await syncProduct(t, storeId, realisticProduct(platform, 42, ref, kind));
      await enrich(t, storeId, '42');
      await addFaq(t, { storeId, entityType: 'product', entityRef: '42', question: 'Washable?', answer: '<ul><li>Yes</li><li>At <b>30°</b></li></ul>', status: 'approved' });
      expect((await t.request(`/api/v1/admin/stores/${storeId}/settings`, jsonRequest('PUT', SETTINGS, bearer(await t.keyWith('admin'))))).status).toBe(200);
      const doc = JSON.parse(await (await t.request(`/api/v1/${platform}/products/42.jsonld`)).text());
      // Safe mode throws on anything expansion would drop or change (unknown terms, invalid values).
      const expanded = await jsonld.expand(doc, { documentLoader: documentLoader as any, safe: true } as any);
      expect(expandedLeaves(expanded).sort()).toEqual(leaves(doc).sort());
      expect(leaves(doc).length).toBeGreaterThan(kind === 'multi' ? 80 : 30);
    });
  }
}
