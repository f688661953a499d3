import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { fixedClock } from '../src/lib/clock.ts';
import { platformAProduct } from './fakes/payloads.ts';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { addFaq, ENRICHMENT, enrich, patchFaq, realisticProduct, seedStore, signedPlatformADelivery, syncProduct } from './helpers/signals.ts';

const BASE = 'https://svc.example';
const APP_SECRET = 'svc-app-secret';
const SHOP = 'acme.myplatform-a.com';
const T0 = Date.parse('2026-02-01T12:00:00Z');

let t: TestApp;
let clock: ReturnType<typeof fixedClock>;

beforeEach(async () => {
  clock = fixedClock(T0);
  t = await makeTestApp({ clock, env: { SVC_BASE_URL: BASE, SVC_PLATFORM_A_APP_SECRET: APP_SECRET } });
});
afterEach(() => t.close());

const signal = (platform: string, id: string | number, ext: string, headers: Record<string, string> = {}) => t.request(`/api/v1/${platform}/products/${id}.${ext}`, { headers });

/** A store of `platform` with one realistic, enriched product and one approved plus one pending FAQ. */
async function enrichedProduct(platform: 'platform-a' | 'platform-b' | 'platform-c', id: number, ref: string, currency = 'USD') {
  const storeId = seedStore(t, platform, ref, currency);
  syncProduct(t, storeId, realisticProduct(platform, id, ref));
  expect((await enrich(t, storeId, String(id))).status).toBe(200);
  await addFaq(t, { storeId, entityType: 'product', entityRef: String(id), question: 'Does it fit a laptop?', answer: '<p>Yes, up to <strong>15 inches</strong>.</p>', status: 'approved' });
  await addFaq(t, { storeId, entityType: 'product', entityRef: String(id), question: 'Secret pending question?', answer: 'not public' });
  return storeId;
}

const product = (doc: any) => doc['@graph'].find((node: any) => node['@type'] === 'Product');
const faqPage = (doc: any) => doc['@graph'].find((node: any) => node['@type'] === 'FAQPage');

describe('signal formats: golden outputs per platform', () => {
  const cases = [
    {
      platform: 'platform-a' as const, id: 101, ref: SHOP, currency: 'USD',
      expected: { name: 'Waxed Canvas Tote', sku: 'TOTE-101-0', gtin: { gtin13: '4006381333930' }, brand: { '@type': 'Brand', name: 'Northwind Goods' }, price: '89.00', url: `https://${SHOP}/products/waxed-canvas-tote`, images: 3 },
    },
    {
      platform: 'platform-b' as const, id: 202, ref: 'abc123', currency: 'GBP',
      expected: { name: 'Trail Runner 2', sku: 'TR2-202', gtin: { gtin12: '012345678905' }, brand: undefined, price: '120', url: 'https://shop.platform-b.example/trail-runner-2/', images: 1 },
    },
    {
      platform: 'platform-c' as const, id: 303, ref: 'https://shop.example', currency: 'EUR',
      expected: { name: 'Ceramic Pour-Over Set', sku: 'POUR-303', gtin: { gtin13: '0799439112766' }, brand: undefined, price: '64.00', url: 'https://shop.example/product/ceramic-pour-over-set/', images: 1 },
    },
  ];

  for (const { platform, id, ref, currency, expected } of cases) {
    test(`${platform}: .jsonld is a schema.org @graph whose Product meets the merchant-listing fields`, async () => {
      await enrichedProduct(platform, id, ref, currency);
      const res = await signal(platform, id, 'jsonld');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/ld+json');
      const doc = JSON.parse(await res.text());
      expect(doc['@context']).toBe('https://schema.org');
      const p = product(doc);
      expect(p).toMatchObject({ name: expected.name, sku: expected.sku, url: expected.url, ...expected.gtin });
      expect(p.brand).toEqual(expected.brand);
      expect(p.image).toHaveLength(expected.images);
      expect(p.description.length).toBeGreaterThan(10);
      expect(p.description).not.toContain('<');
      expect(p.offers).toEqual({ '@type': 'Offer', price: expected.price, priceCurrency: currency, availability: 'https://schema.org/InStock', url: expected.url });
      expect(Number(p.offers.price)).toBeGreaterThan(0);
      expect(p.additionalProperty).toEqual([
        { '@type': 'PropertyValue', name: 'Material', value: 'Waxed canvas' },
        { '@type': 'PropertyValue', name: 'Origin', value: 'Portugal' },
      ]);
      expect(faqPage(doc).mainEntity).toEqual([
        { '@type': 'Question', name: 'Does it fit a laptop?', acceptedAnswer: { '@type': 'Answer', text: '<p>Yes, up to <strong>15 inches</strong>.</p>' } },
      ]);
    });

    test(`${platform}: .llm is the svc.llm/1 document`, async () => {
      await enrichedProduct(platform, id, ref, currency);
      const res = await signal(platform, id, 'llm');
      expect(res.headers.get('content-type')).toBe('application/json');
      const doc = await res.json();
      expect(Object.keys(doc)).toEqual(['schema', 'name', 'summary', 'description', 'highlights', 'attributes', 'price', 'availability', 'brand', 'sku', 'gtin', 'url', 'images', 'faqs', 'updatedAt', 'source']);
      expect(doc).toMatchObject({
        schema: 'svc.llm/1',
        name: expected.name,
        summary: ENRICHMENT.summary,
        highlights: ENRICHMENT.highlights,
        attributes: ENRICHMENT.attributes,
        price: { amount: expected.price, currency },
        availability: 'in_stock',
        url: expected.url,
        faqs: [{ question: 'Does it fit a laptop?', answer: 'Yes, up to 15 inches.' }],
        // Each FAQ write moves the entity's change stamp by at least 1 ms (it doubles as a version).
        updatedAt: expect.stringMatching(/^2026-02-01T12:00:00\.\d{3}Z$/),
        source: { platform, productId: String(id), url: `${BASE}/api/v1/${platform}/products/${id}.llm` },
      });
    });

    test(`${platform}: .md follows llms.txt conventions`, async () => {
      await enrichedProduct(platform, id, ref, currency);
      const res = await signal(platform, id, 'md');
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      const md = await res.text();
      const lines = md.split('\n');
      expect(lines[0]).toBe(`# ${expected.name}`);
      expect(lines[2]).toBe(`> ${ENRICHMENT.summary}`);
      expect(lines.filter((l) => l.startsWith('# '))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith('## '))).toEqual(['## Details', '## Highlights', '## FAQ', '## Links']);
      expect(md).toContain(`- Price: ${expected.price} ${currency}\n- Availability: In stock\n`);
      expect(md).toContain('## Highlights\n\n- Ships in 2 days\n- Two-year warranty\n');
      expect(md).toContain('### Does it fit a laptop?\n\nYes, up to 15 inches.\n');
      expect(md).toContain(`- [JSON-LD](<${BASE}/api/v1/${platform}/products/${id}.jsonld>)`);
      expect(md).toContain(`- [LLM JSON](<${BASE}/api/v1/${platform}/products/${id}.llm>)`);
      expect(md).toContain(`- [Signals index](<${BASE}/api/v1/${platform}/products/${id}.meta>)`);
    });

    test(`${platform}: .meta holds every signal and absolute links to each format and itself`, async () => {
      await enrichedProduct(platform, id, ref, currency);
      const meta = await (await signal(platform, id, 'meta')).json();
      const base = `${BASE}/api/v1/${platform}/products/${id}`;
      expect(meta.links).toEqual({ self: `${base}.meta`, jsonld: `${base}.jsonld`, llm: `${base}.llm`, md: `${base}.md` });
      expect(meta.signals.jsonld).toEqual(JSON.parse(await (await signal(platform, id, 'jsonld')).text()));
      expect(meta.signals.llm).toEqual(await (await signal(platform, id, 'llm')).json());
      expect(meta.signals.md).toBe(await (await signal(platform, id, 'md')).text());
      for (const link of Object.values(meta.links) as string[]) expect((await t.request(link.replace(BASE, ''))).status).toBe(200);
    });
  }

  test('the platform-A Markdown view, in full', async () => {
    await enrichedProduct('platform-a', 101, SHOP);
    expect(await (await signal('platform-a', 101, 'md')).text()).toBe(`# Waxed Canvas Tote

> A sturdy everyday product, made to last.

Hand-finished waxed canvas tote with vegetable-tanned leather handles. Water resistant Brass rivets \\& hardware Interior zip pocket Each bag is cut and stitched in our workshop; small variations in colour are part of the charm.

## Details

- Price: 89.00 USD
- Availability: In stock
- Brand: Northwind Goods
- SKU: TOTE-101-0
- GTIN: 4006381333930
- Material: Waxed canvas
- Origin: Portugal

## Highlights

- Ships in 2 days
- Two-year warranty

## FAQ

### Does it fit a laptop?

Yes, up to 15 inches.

## Links

- [Product page](<https://${SHOP}/products/waxed-canvas-tote>): the store's own page
- [Image 1](<https://cdn.platform-a.example/files/tote-101-0.jpg?v=1736521200>)
- [Image 2](<https://cdn.platform-a.example/files/tote-101-1.jpg?v=1736521200>)
- [Image 3](<https://cdn.platform-a.example/files/tote-101-2.jpg?v=1736521200>)
- [JSON-LD](<${BASE}/api/v1/platform-a/products/101.jsonld>): schema.org Product and FAQPage
- [LLM JSON](<${BASE}/api/v1/platform-a/products/101.llm>): svc.llm/1 document
- [Signals index](<${BASE}/api/v1/platform-a/products/101.meta>): every format and its links
`);
  });

  test('a product without a positive price or a currency gets no offer', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP, null);
    syncProduct(t, storeId, { ...realisticProduct('platform-a', 7, SHOP), price: '0.00' });
    await enrich(t, storeId, '7');
    const p = product(JSON.parse(await (await signal('platform-a', 7, 'jsonld')).text()));
    expect(p.offers).toBeUndefined();
    expect((await (await signal('platform-a', 7, 'llm')).json()).price).toBeNull();
  });
});

describe('only approved FAQs appear anywhere public', () => {
  test('pending and rejected entries are absent from every format; approving one adds it', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    const rejected = await addFaq(t, { storeId, entityType: 'product', entityRef: 'waxed-canvas-tote', question: 'Rejected question?', answer: 'no', status: 'rejected' });
    for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
      const body = await (await signal('platform-a', 101, ext)).text();
      expect(body).toContain('Does it fit a laptop?');
      expect(body).not.toContain('Secret pending question');
      expect(body).not.toContain('Rejected question');
    }
    await patchFaq(t, rejected.id, { status: 'approved' });
    expect(await (await signal('platform-a', 101, 'md')).text()).toContain('### Rejected question?');
  });

  test('a product with no approved FAQ has no FAQPage and no FAQ section', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    syncProduct(t, storeId, realisticProduct('platform-a', 5, SHOP));
    await enrich(t, storeId, '5');
    const doc = JSON.parse(await (await signal('platform-a', 5, 'jsonld')).text());
    expect(doc['@graph']).toHaveLength(1);
    expect(await (await signal('platform-a', 5, 'md')).text()).not.toContain('## FAQ');
  });
});

describe('hostile merchant text is inert in every format', () => {
  const HOSTILE_TITLE = '</script><script>alert(1)</script> [Buy](https://evil.test) \u2028 <img src=x onerror=alert(1)> # Tote \u0007';

  async function hostileProduct() {
    const storeId = seedStore(t, 'platform-a', SHOP);
    syncProduct(t, storeId, {
      ...realisticProduct('platform-a', 66, SHOP),
      title: HOSTILE_TITLE,
      descriptionHtml: '<p>Nice</p><script>steal()</script><a href="javascript:alert(1)">x</a>',
      url: 'javascript:alert(1)',
      images: ['https://cdn.example/a.jpg', 'javascript:alert(2)', 'https://cdn.example/b.jpg?x=<script>'],
    });
    await enrich(t, storeId, '66', {
      summary: '![pixel](https://evil.test/p.gif) <b>bold</b>\n\n# Injected heading',
      highlights: ['[click me](javascript:alert(1))', '<script>alert(1)</script>ok', '- nested'],
      attributes: { '<i>Material</i>': '](https://evil.test) `code`' },
    });
    await addFaq(t, { storeId, entityType: 'product', entityRef: '66', question: '</script><b>Q</b> [x](https://evil.test)?', answer: '<p onclick="x">A</p><script>alert(1)</script><a href="javascript:alert(1)">bad</a> <a href="https://ok.test/">good</a>', status: 'approved' });
  }

  test('.jsonld cannot close a script element and carries no executable URL', async () => {
    await hostileProduct();
    const raw = await (await signal('platform-a', 66, 'jsonld')).text();
    expect(raw).not.toMatch(/[<>&\u2028\u2029]/);
    expect(raw).not.toContain('javascript:');
    const p = product(JSON.parse(raw));
    expect(p.name).toContain('</script>');
    expect(p.name).not.toContain('\u0007');
    expect(p.url).toBeUndefined();
    expect(p.image).toEqual(['https://cdn.example/a.jpg', 'https://cdn.example/b.jpg?x=%3Cscript%3E']);
    expect(p.description).toBe('Nice x');
  });

  test('.md escapes Markdown links, images, HTML and headings in merchant text', async () => {
    await hostileProduct();
    const md = await (await signal('platform-a', 66, 'md')).text();
    expect(md).not.toMatch(/(^|[^\\])<(script|img|b|i)\b/);
    expect(md).not.toMatch(/(^|[^\\])\]\((?!<)/m);
    expect(md).not.toContain('\u0007');
    expect(md).not.toContain('\u2028');
    const headings = md.split('\n').filter((l) => /^#{1,6} /.test(l));
    expect(headings).toEqual([expect.stringMatching(/^# \\<\/script\\>/), '## Details', '## Highlights', '## FAQ', expect.stringMatching(/^### /), '## Links']);
    // Every link line is svc's own, and the only merchant link kept is a checked http(s) image.
    const links = [...md.matchAll(/(?<!\\)\[([^\]]*)\]\(<([^>]*)>\)/g)].map((m) => m[2]);
    expect(links).toEqual(['https://cdn.example/a.jpg', 'https://cdn.example/b.jpg?x=%3Cscript%3E', `${BASE}/api/v1/platform-a/products/66.jsonld`, `${BASE}/api/v1/platform-a/products/66.llm`, `${BASE}/api/v1/platform-a/products/66.meta`]);
  });

  test('.llm and .meta are valid JSON holding the text as text', async () => {
    await hostileProduct();
    const llm = await (await signal('platform-a', 66, 'llm')).json();
    expect(llm.url).toBeNull();
    expect(llm.summary).toBe('![pixel](https://evil.test/p.gif) bold # Injected heading');
    expect(llm.highlights).toEqual(['[click me](javascript:alert(1))', 'ok', '- nested']);
    expect(llm.faqs).toEqual([{ question: 'Q [x](https://evil.test)?', answer: 'A bad good' }]);
    const metaRaw = await (await signal('platform-a', 66, 'meta')).text();
    expect(metaRaw).not.toMatch(/[<>]/);
    expect(JSON.parse(metaRaw).signals.llm).toEqual(llm);
  });
});

describe('which products have signals', () => {
  test('404 for an unknown product, an unknown format and a product not enriched', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    syncProduct(t, storeId, realisticProduct('platform-a', 9, SHOP));
    for (const path of ['/api/v1/platform-a/products/404.jsonld', '/api/v1/platform-a/products/9.jsonld', '/api/v1/platform-a/products/9.html', '/api/v1/platform-a/products/9', '/api/v1/platform-z/products/9.jsonld']) {
      const res = await t.request(path);
      expect(res.status).toBe(404);
      expect(Object.keys(await res.json()).sort()).toEqual(['detail', 'error']);
    }
  });

  test('404 on another platform\'s path for the same id', async () => {
    await enrichedProduct('platform-a', 101, SHOP);
    expect((await signal('platform-b', 101, 'jsonld')).status).toBe(404);
  });

  test('404 once the product is removed by a webhook; enrichment comes back with it', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    t.webhooks.catalog.remove(storeId, '101', Date.parse('2026-01-11T00:00:00Z'));
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(404);
    syncProduct(t, storeId, { ...realisticProduct('platform-a', 101, SHOP), updatedAt: Date.parse('2026-01-12T00:00:00Z') });
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(200);
  });

  test('404 for an inactive store that was not withdrawn; 410 for every format after app/uninstalled', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    t.database.sqlite.run("UPDATE stores SET status = 'inactive' WHERE id = ?", [storeId]);
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(404);
    t.webhooks.stores.deactivate(storeId);
    for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
      const res = await signal('platform-a', 101, ext);
      expect(res.status).toBe(410);
      expect((await res.json()).error).toBe('signals_withdrawn');
    }
  });

  test('410 after a real, signed app/uninstalled delivery', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    expect((await deliver('app/uninstalled', { id: 1, domain: SHOP })).status).toBe(200);
    expect(t.webhooks.stores.get(storeId)!.signalsWithdrawnAt).not.toBeNull();
    expect((await signal('platform-a', 101, 'md')).status).toBe(410);
  });

  test('two stores of one platform with the same product id: the active store wins, two active stores are ambiguous (404)', async () => {
    const first = await enrichedProduct('platform-b', 500, 'hash-one');
    const second = seedStore(t, 'platform-b', 'hash-two');
    syncProduct(t, second, { ...realisticProduct('platform-b', 500, 'hash-two'), title: 'Second store shoe' });
    // Not enriched in the second store: the first store's product is the only candidate.
    expect(product(JSON.parse(await (await signal('platform-b', 500, 'jsonld')).text())).name).toBe('Trail Runner 2');
    await enrich(t, second, '500');
    const ambiguous = await signal('platform-b', 500, 'jsonld');
    expect(ambiguous.status).toBe(404);
    expect((await ambiguous.json()).detail).toContain('more than one store');
    t.webhooks.stores.deactivate(first);
    expect(product(JSON.parse(await (await signal('platform-b', 500, 'jsonld')).text())).name).toBe('Second store shoe');
  });
});

const deliver = (topic: string, payload: unknown) => t.request('/api/v1/webhooks/platform-a', signedPlatformADelivery(APP_SECRET, SHOP, topic, payload));

describe('caching headers and invalidation', () => {
  test('every format carries ETag, Last-Modified and Cache-Control, and answers 304 to If-None-Match', async () => {
    await enrichedProduct('platform-a', 101, SHOP);
    for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
      const res = await signal('platform-a', 101, ext);
      const etag = res.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(res.headers.get('last-modified')).toBe(new Date(T0).toUTCString());
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      const again = await signal('platform-a', 101, ext, { 'If-None-Match': etag });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(await again.text()).toBe('');
    }
  });

  test('a signed products/update webhook changes the signals, their ETag and Last-Modified', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    expect((await deliver('products/update', platformAProduct(101, { updatedAt: '2026-01-10T10:00:00Z' }))).status).toBe(200);
    await enrich(t, storeId, '101');
    const before = await signal('platform-a', 101, 'jsonld');
    const etag = before.headers.get('etag')!;
    clock.advance(60_000);
    expect((await deliver('products/update', platformAProduct(101, { updatedAt: '2026-01-10T11:00:00Z', price: '79.00', title: 'Waxed Canvas Tote II' }))).status).toBe(200);
    const after = await signal('platform-a', 101, 'jsonld', { 'If-None-Match': etag });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(after.headers.get('last-modified')).toBe(new Date(T0 + 60_000).toUTCString());
    const p = product(JSON.parse(await after.text()));
    expect(p.name).toBe('Waxed Canvas Tote II');
    expect(p.offers.price).toBe('79.00');
    // The webhook left the enrichment alone (spec §4.3 rule 1).
    expect(p.additionalProperty).toHaveLength(2);
  });

  test('an enrichment change and an approved-FAQ change or delete each change the signals, even within one millisecond', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    const etags = new Set<string>();
    const etag = async () => etags.add((await signal('platform-a', 101, 'llm')).headers.get('etag')!);
    await etag();
    await enrich(t, storeId, '101', { ...ENRICHMENT, summary: 'Changed summary.' });
    await etag();
    const faq = await addFaq(t, { storeId, entityType: 'product', entityRef: 'waxed-canvas-tote', question: 'New?', answer: 'Yes', status: 'approved' });
    await etag();
    await patchFaq(t, faq.id, { answer: 'Yes, really' });
    await etag();
    await t.request(`/api/v1/admin/faqs/${faq.id}`, { method: 'DELETE', headers: bearer(t.keyWith('admin')) });
    await etag();
    expect(etags.size).toBe(5);
    expect(await (await signal('platform-a', 101, 'llm')).json()).toMatchObject({ summary: 'Changed summary.', faqs: [{ question: 'Does it fit a laptop?' }] });
  });

  test('a change committed by another database connection is seen at once despite the render cache', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(200);
    const other = new Database(t.config.databaseFile);
    other.run('UPDATE stores SET signals_withdrawn_at = 1, status = ? WHERE id = ?', ['inactive', storeId]);
    other.close();
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(410);
  });

  test('Last-Modified is the latest of the product, enrichment and FAQ change times', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    clock.advance(5_000);
    await addFaq(t, { storeId, entityType: 'product', entityRef: '101', question: 'Later?', answer: 'Yes' });
    expect((await signal('platform-a', 101, 'md')).headers.get('last-modified')).toBe(new Date(T0 + 5_000).toUTCString());
  });
});

describe('enrichment admin endpoints', () => {
  const url = (storeId: string, productId: string) => `/api/v1/admin/stores/${storeId}/products/${productId}/enrichment`;

  test('PUT stores cleaned plain text, GET returns it, DELETE removes it and the signals go 404', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    const put = await enrich(t, storeId, '101', { summary: '<b>Great</b>\u0000 tote', highlights: ['<i>One</i>', '  '], attributes: { Size: '<em>L</em>' } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ productId: '101', summary: 'Great tote', highlights: ['One'], attributes: { Size: 'L' } });
    const got = await t.request(url(storeId, '101'), { headers: bearer(t.keyWith('admin')) });
    expect(await got.json()).toMatchObject({ summary: 'Great tote' });
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(200);
    expect((await t.request(url(storeId, '101'), { method: 'DELETE', headers: bearer(t.keyWith('admin')) })).status).toBe(204);
    expect((await t.request(url(storeId, '101'), { headers: bearer(t.keyWith('admin')) })).status).toBe(404);
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(404);
  });

  test('the catalogue list and product views say when each product was enriched (null when not)', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    syncProduct(t, storeId, realisticProduct('platform-a', 102, SHOP));
    expect((await enrich(t, storeId, '102')).status).toBe(200);
    const admin = bearer(t.keyWith('admin'));
    const list = await (await t.request(`/api/v1/admin/stores/${storeId}/products`, { headers: admin })).json();
    expect(list.items.map((p: { productId: string; enrichedAt: string | null }) => [p.productId, p.enrichedAt !== null])).toEqual([['101', false], ['102', true]]);
    const one = await (await t.request(`/api/v1/admin/stores/${storeId}/products/102`, { headers: admin })).json();
    expect(Date.parse(one.enrichedAt)).toBeGreaterThan(0);
  });

  test('404 for an unknown store or a product not in the catalogue; admin scope required', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    expect((await enrich(t, 'nope', '101')).status).toBe(404);
    expect((await enrich(t, storeId, '101')).status).toBe(404);
    syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    expect((await t.request(url(storeId, '101'), { method: 'PUT', headers: bearer(t.keyWith('dashboard:read')) })).status).toBe(403);
  });

  test('lengths and counts are capped (400)', async () => {
    const storeId = seedStore(t, 'platform-a', SHOP);
    syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    const bad = [
      { ...ENRICHMENT, summary: 'x'.repeat(1001) },
      { ...ENRICHMENT, summary: '' },
      { ...ENRICHMENT, highlights: Array.from({ length: 21 }, () => 'h') },
      { ...ENRICHMENT, highlights: ['x'.repeat(301)] },
      { ...ENRICHMENT, attributes: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      { ...ENRICHMENT, attributes: { k: 'x'.repeat(501) } },
      { ...ENRICHMENT, extra: true },
      { summary: 'only' },
    ];
    for (const body of bad) expect((await enrich(t, storeId, '101', body)).status).toBe(400);
  });
});
