import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
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
async function enrichedProduct(platform: 'platform-a' | 'platform-b' | 'platform-c', id: number, ref: string, currency = 'USD', kind?: 'multi' | 'single') {
  const storeId = await seedStore(t, platform, ref, currency);
  await syncProduct(t, storeId, realisticProduct(platform, id, ref, kind));
  expect((await enrich(t, storeId, String(id))).status).toBe(200);
  await addFaq(t, { storeId, entityType: 'product', entityRef: String(id), question: 'Does it fit a laptop?', answer: '<p>Yes, up to <strong>15 inches</strong>.</p>', status: 'approved' });
  await addFaq(t, { storeId, entityType: 'product', entityRef: String(id), question: 'Secret pending question?', answer: 'not public' });
  return storeId;
}

const product = (doc: any) => doc['@graph'].find((node: any) => node['@type'] === 'Product' || node['@type'] === 'ProductGroup');
const faqPage = (doc: any) => doc['@graph'].find((node: any) => node['@type'] === 'FAQPage');
/** The store-scoped base of a product's signal URLs (what every emitted link uses). */
const scoped = (platform: string, storeId: string, id: string | number) => `${BASE}/api/v1/${platform}/stores/${storeId}/products/${id}`;

describe('signal formats: golden outputs per platform, multi-variant products', () => {
  const cases = [
    {
      platform: 'platform-a' as const, id: 101, ref: SHOP, currency: 'USD',
      name: 'Waxed Canvas Tote', url: `https://${SHOP}/products/waxed-canvas-tote`, variesBy: ['https://schema.org/color'], range: { min: '89.00', max: '99.00' },
      variants: [
        { id: '1010', sku: 'TOTE-101-OLIVE', gtin13: '4006381333931', price: '89.00', was: '99.00', availability: 'InStock', props: { color: 'Olive' } },
        { id: '1011', sku: 'TOTE-101-NAVY', gtin13: '4006381333948', price: '89.00', was: '99.00', availability: 'OutOfStock', props: { color: 'Navy' } },
        { id: '1012', sku: 'TOTE-101-SAND', gtin13: '4006381333955', price: '99.00', was: null, availability: 'InStock', props: { color: 'Sand' } },
      ],
    },
    {
      platform: 'platform-b' as const, id: 202, ref: 'abc123', currency: 'GBP',
      name: 'Alpine Fleece', url: 'https://shop.platform-b.example/alpine-fleece/', variesBy: ['https://schema.org/size', 'https://schema.org/color'], range: { min: '64', max: '69' },
      variants: [
        { id: '2020', sku: 'FLEECE-202-S-FOREST', gtin13: '5012345678900', price: '64', was: null, availability: 'InStock', props: { size: 'S', color: 'Forest' }, mpn: 'AF-S-Forest' },
        { id: '2021', sku: 'FLEECE-202-M-FOREST', gtin13: '5012345678917', price: '64', was: null, availability: 'OutOfStock', props: { size: 'M', color: 'Forest' }, mpn: 'AF-M-Forest' },
        { id: '2022', sku: 'FLEECE-202-L-FOREST', gtin13: '5012345678924', price: '69', was: null, availability: 'InStock', props: { size: 'L', color: 'Forest' }, mpn: 'AF-L-Forest' },
        { id: '2023', sku: 'FLEECE-202-M-SLATE', gtin13: '5012345678931', price: '64', was: null, availability: 'InStock', props: { size: 'M', color: 'Slate' }, mpn: 'AF-M-Slate' },
      ],
    },
    {
      platform: 'platform-c' as const, id: 303, ref: 'https://shop.example', currency: 'EUR',
      name: 'Kitchen Apron', url: 'https://shop.example/product/kitchen-apron/', variesBy: ['https://schema.org/material', 'https://schema.org/pattern'], range: { min: '36.00', max: '42.00' },
      variants: [
        { id: '3031', sku: 'APRON-303-LINEN-STRIPE', gtin13: '0012345678905', price: '42.00', was: null, availability: 'InStock', props: { material: 'Linen', pattern: 'Stripe' } },
        { id: '3032', sku: 'APRON-303-COTTON-CHECK', gtin13: '0614141000036', price: '36.00', was: '45.00', availability: 'OutOfStock', props: { material: 'Cotton', pattern: 'Check' } },
      ],
    },
  ];

  for (const c of cases) {
    test(`${c.platform}: .jsonld is one ProductGroup whose variants each carry their price, SKU, GTIN and availability`, async () => {
      const storeId = await enrichedProduct(c.platform, c.id, c.ref, c.currency, 'multi');
      const res = await signal(c.platform, c.id, 'jsonld');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/ld+json;charset=utf-8');
      const doc = JSON.parse(await res.text());
      expect(doc['@context']).toBe('https://schema.org');
      const group = product(doc);
      expect(group).toMatchObject({ '@type': 'ProductGroup', '@id': `${scoped(c.platform, storeId, c.id)}.jsonld#product`, name: c.name, url: c.url, variesBy: c.variesBy });
      expect(group.offers).toBeUndefined();
      expect(group.hasVariant).toHaveLength(c.variants.length);
      c.variants.forEach((v, i) => {
        const node = group.hasVariant[i];
        expect(node).toMatchObject({ '@type': 'Product', sku: v.sku, gtin13: v.gtin13, ...v.props, ...('mpn' in v ? { mpn: v.mpn } : {}) });
        expect(node['@id']).toBe(`${scoped(c.platform, storeId, c.id)}.jsonld#variant-${v.id}`);
        expect(node.name.startsWith(`${c.name} - `)).toBe(true);
        expect(node.image.length).toBeGreaterThan(0);
        expect(node.offers).toMatchObject({ '@type': 'Offer', price: v.price, priceCurrency: c.currency, availability: `https://schema.org/${v.availability}` });
        if (v.was) expect(node.offers.priceSpecification).toEqual({ '@type': 'UnitPriceSpecification', priceType: 'https://schema.org/StrikethroughPrice', price: v.was, priceCurrency: c.currency });
        else expect(node.offers.priceSpecification).toBeUndefined();
      });
      expect(group.additionalProperty).toEqual([
        { '@type': 'PropertyValue', name: 'Material', value: 'Waxed canvas' },
        { '@type': 'PropertyValue', name: 'Origin', value: 'Portugal' },
      ]);
    });

    test(`${c.platform}: .llm lists every variant with its options, price and availability, and the price range`, async () => {
      await enrichedProduct(c.platform, c.id, c.ref, c.currency, 'multi');
      const doc = await (await signal(c.platform, c.id, 'llm')).json();
      expect(doc.schema).toBe('svc.llm/2');
      expect(doc.price).toEqual({ ...c.range, currency: c.currency });
      expect(doc.variants.map((v: any) => [v.id, v.sku, v.gtin, v.price, v.availability])).toEqual(
        c.variants.map((v) => [v.id, v.sku, v.gtin13, v.price, v.availability === 'InStock' ? 'in_stock' : 'out_of_stock']),
      );
      expect(doc.variants.map((v: any) => Object.values(v.options))).toEqual(c.variants.map((v) => Object.values(v.props)));
    });

    test(`${c.platform}: .md shows the price range and one line per variant`, async () => {
      await enrichedProduct(c.platform, c.id, c.ref, c.currency, 'multi');
      const md = await (await signal(c.platform, c.id, 'md')).text();
      expect(md).toContain(`- Price: ${c.range.min}–${c.range.max} ${c.currency}\n`);
      const section = md.split('## Variants\n\n')[1]!.split('\n\n')[0]!.split('\n');
      expect(section).toHaveLength(c.variants.length);
      c.variants.forEach((v, i) => {
        expect(section[i]).toContain(`${v.price} ${c.currency}`);
        expect(section[i]).toContain(`SKU ${v.sku}`);
        expect(section[i]).toContain(`GTIN ${v.gtin13}`);
        expect(section[i]).toContain(v.availability === 'InStock' ? 'In stock' : 'Out of stock');
        for (const value of Object.values(v.props)) expect(section[i]).toContain(value);
      });
    });
  }
});

describe('signal formats: golden outputs per platform, single-variant products', () => {
  const cases = [
    {
      platform: 'platform-a' as const, id: 111, ref: SHOP, currency: 'USD',
      expected: { name: 'Leather Card Holder', sku: 'CARD-111', gtin: { gtin13: '0036000291452' }, mpn: undefined, brand: { '@type': 'Brand', name: 'Northwind Goods' }, price: '35.00', url: `https://${SHOP}/products/leather-card-holder`, images: 1 },
    },
    {
      platform: 'platform-b' as const, id: 202, ref: 'abc123', currency: 'GBP',
      expected: { name: 'Trail Runner 2', sku: 'TR2-202', gtin: { gtin12: '012345678905' }, mpn: 'TR2-M-202', brand: undefined, price: '120', url: 'https://shop.platform-b.example/trail-runner-2/', images: 1 },
    },
    {
      platform: 'platform-c' as const, id: 303, ref: 'https://shop.example', currency: 'EUR',
      expected: { name: 'Ceramic Pour-Over Set', sku: 'POUR-303', gtin: { gtin13: '0799439112766' }, mpn: undefined, brand: undefined, price: '64.00', url: 'https://shop.example/product/ceramic-pour-over-set/', images: 1 },
    },
  ];

  for (const { platform, id, ref, currency, expected } of cases) {
    test(`${platform}: .jsonld is a schema.org @graph whose plain Product with one Offer meets the merchant-listing fields`, async () => {
      await enrichedProduct(platform, id, ref, currency, 'single');
      const res = await signal(platform, id, 'jsonld');
      expect(res.status).toBe(200);
      const doc = JSON.parse(await res.text());
      const p = product(doc);
      expect(p).toMatchObject({ '@type': 'Product', name: expected.name, sku: expected.sku, url: expected.url, ...expected.gtin });
      expect(p.mpn).toBe(expected.mpn);
      expect(p.hasVariant).toBeUndefined();
      expect(p.brand).toEqual(expected.brand);
      expect(p.image).toHaveLength(expected.images);
      expect(p.description.length).toBeGreaterThan(10);
      expect(p.description).not.toContain('<');
      expect(p.offers).toEqual({ '@type': 'Offer', price: expected.price, priceCurrency: currency, availability: 'https://schema.org/InStock', url: expected.url });
      expect(faqPage(doc).mainEntity).toEqual([
        { '@type': 'Question', name: 'Does it fit a laptop?', acceptedAnswer: { '@type': 'Answer', text: '<p>Yes, up to <strong>15 inches</strong>.</p>' } },
      ]);
    });

    test(`${platform}: .llm is the svc.llm/2 document`, async () => {
      const storeId = await enrichedProduct(platform, id, ref, currency, 'single');
      const res = await signal(platform, id, 'llm');
      expect(res.headers.get('content-type')).toBe('application/json;charset=utf-8');
      const doc = await res.json();
      expect(Object.keys(doc)).toEqual(['schema', 'name', 'summary', 'description', 'highlights', 'attributes', 'price', 'availability', 'brand', 'sku', 'gtin', 'mpn', 'url', 'images', 'options', 'variants', 'terms', 'faqs', 'updatedAt', 'source']);
      expect(doc).toMatchObject({
        schema: 'svc.llm/2',
        name: expected.name,
        summary: ENRICHMENT.summary,
        highlights: ENRICHMENT.highlights,
        attributes: ENRICHMENT.attributes,
        price: { min: expected.price, max: expected.price, currency },
        availability: 'in_stock',
        sku: expected.sku,
        gtin: Object.values(expected.gtin)[0],
        mpn: expected.mpn ?? null,
        url: expected.url,
        options: [],
        variants: [],
        terms: { itemCondition: null, returnPolicy: null, shipping: null },
        faqs: [{ question: 'Does it fit a laptop?', answer: 'Yes, up to 15 inches.' }],
        // Each FAQ write moves the entity's change stamp by at least 1 ms (it doubles as a version).
        updatedAt: expect.stringMatching(/^2026-02-01T12:00:00\.\d{3}Z$/),
        source: { platform, storeId, productId: String(id), url: `${scoped(platform, storeId, id)}.llm` },
      });
    });

    test(`${platform}: .md follows llms.txt conventions`, async () => {
      const storeId = await enrichedProduct(platform, id, ref, currency, 'single');
      const res = await signal(platform, id, 'md');
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      const md = await res.text();
      const lines = md.split('\n');
      expect(lines[0]).toBe(`# ${expected.name}`);
      expect(lines[2]).toBe(`> ${ENRICHMENT.summary}`);
      expect(lines.filter((l) => l.startsWith('# '))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith('## '))).toEqual(['## Details', '## Highlights', '## FAQ', '## Links']);
      expect(md).toContain(`- Price: ${expected.price} ${currency}\n- Availability: In stock\n`);
      expect(md).toContain(`- SKU: ${expected.sku}\n- GTIN: ${Object.values(expected.gtin)[0]}\n`);
      expect(md).toContain('## Highlights\n\n- Ships in 2 days\n- Two-year warranty\n');
      expect(md).toContain('### Does it fit a laptop?\n\nYes, up to 15 inches.\n');
      expect(md).toContain(`- [JSON-LD](<${scoped(platform, storeId, id)}.jsonld>)`);
      expect(md).toContain(`- [LLM JSON](<${scoped(platform, storeId, id)}.llm>)`);
      expect(md).toContain(`- [Signals index](<${scoped(platform, storeId, id)}.meta>)`);
      expect(md).toContain(`- [Store index](<${BASE}/api/v1/${platform}/stores/${storeId}/llms.txt>)`);
    });

    test(`${platform}: .meta holds every signal and absolute links to each format, itself and the store's sitemap and llms.txt`, async () => {
      const storeId = await enrichedProduct(platform, id, ref, currency, 'single');
      const meta = await (await signal(platform, id, 'meta')).json();
      const base = scoped(platform, storeId, id);
      const store = `${BASE}/api/v1/${platform}/stores/${storeId}`;
      expect(meta).toMatchObject({ schema: 'svc.meta/2', platform, storeId, productId: String(id) });
      expect(meta.links).toEqual({ self: `${base}.meta`, jsonld: `${base}.jsonld`, llm: `${base}.llm`, md: `${base}.md`, sitemap: `${store}/sitemap.xml`, llmsTxt: `${store}/llms.txt` });
      expect(meta.signals.jsonld).toEqual(JSON.parse(await (await signal(platform, id, 'jsonld')).text()));
      expect(meta.signals.llm).toEqual(await (await signal(platform, id, 'llm')).json());
      expect(meta.signals.md).toBe(await (await signal(platform, id, 'md')).text());
      for (const link of Object.values(meta.links) as string[]) expect((await t.request(link.replace(BASE, ''))).status).toBe(200);
    });
  }

  test('the platform-A Markdown view of a multi-variant product, in full', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    const base = scoped('platform-a', storeId, 101);
    expect(await (await signal('platform-a', 101, 'md')).text()).toBe(`# Waxed Canvas Tote

> A sturdy everyday product, made to last.

Hand-finished waxed canvas tote with vegetable-tanned leather handles.

- Water resistant
- Brass rivets \\& hardware
- Interior zip pocket

Each bag is cut and stitched in our workshop; small variations in colour are part of the charm.

## Details

- Price: 89.00–99.00 USD
- Availability: In stock
- Brand: Northwind Goods
- Material: Waxed canvas
- Origin: Portugal

## Variants

- Color: Olive · 89.00 USD \\(was 99.00\\) · In stock · SKU TOTE-101-OLIVE · GTIN 4006381333931
- Color: Navy · 89.00 USD \\(was 99.00\\) · Out of stock · SKU TOTE-101-NAVY · GTIN 4006381333948
- Color: Sand · 99.00 USD · In stock · SKU TOTE-101-SAND · GTIN 4006381333955

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
- [JSON-LD](<${base}.jsonld>): schema.org ProductGroup and FAQPage
- [LLM JSON](<${base}.llm>): svc.llm/2 document
- [Signals index](<${base}.meta>): every format and its links
- [Store index](<${BASE}/api/v1/platform-a/stores/${storeId}/llms.txt>): every product of the store
`);
  });

  test('a product without a positive price or a currency gets no offer', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP, null);
    await syncProduct(t, storeId, { ...realisticProduct('platform-a', 7, SHOP, 'single'), price: '0.00', variants: [] });
    await enrich(t, storeId, '7');
    const p = product(JSON.parse(await (await signal('platform-a', 7, 'jsonld')).text()));
    expect(p.offers).toBeUndefined();
    expect((await (await signal('platform-a', 7, 'llm')).json()).price).toBeNull();
  });

  test('a variant without a positive price gets no offer; the others keep theirs and the range ignores it', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    const data = realisticProduct('platform-a', 8, SHOP);
    await syncProduct(t, storeId, { ...data, variants: data.variants.map((v, i) => (i === 2 ? { ...v, price: '0.00' } : v)) });
    await enrich(t, storeId, '8');
    const group = product(JSON.parse(await (await signal('platform-a', 8, 'jsonld')).text()));
    expect(group.hasVariant.map((v: any) => v.offers?.price)).toEqual(['89.00', '89.00', undefined]);
    expect((await (await signal('platform-a', 8, 'llm')).json()).price).toEqual({ min: '89.00', max: '89.00', currency: 'USD' });
  });
});

describe('merchant HTML reads as written in every format', () => {
  const DESCRIPTION =
    '<p>Shell is <strong>seam-sealed</strong>, 3-layer &amp; <em>breathable</em>.</p>' +
    '<ul><li>Waterproof rating<ul><li>20,000&nbsp;mm</li></ul></li><li>Pit zips</li></ul>' +
    '<table><tr><th>Size</th><th>Chest</th></tr><tr><td>M</td><td>96 cm</td></tr></table><p>&copy; Northwind &ndash; caf&eacute; &amp;lt;3</p>';

  async function product101() {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, { ...realisticProduct('platform-a', 101, SHOP, 'single'), descriptionHtml: DESCRIPTION });
    await enrich(t, storeId, '101');
    await addFaq(t, { storeId, entityType: 'product', entityRef: '101', question: 'How do I wash it?', answer: '<ul><li>Machine wash cold</li><li>Tumble dry low</li></ul>', status: 'approved' });
  }

  const TEXT = 'Shell is seam-sealed, 3-layer & breathable.\nWaterproof rating\n20,000 mm\nPit zips\nSize | Chest\nM | 96 cm\n© Northwind – café &lt;3';

  test('.jsonld and .llm: one line per block, no space before punctuation, entities decoded once', async () => {
    await product101();
    expect(product(JSON.parse(await (await signal('platform-a', 101, 'jsonld')).text())).description).toBe(TEXT);
    const llm = await (await signal('platform-a', 101, 'llm')).json();
    expect(llm.description).toBe(TEXT);
    expect(llm.faqs[0].answer).toBe('Machine wash cold\nTumble dry low');
  });

  test('.md: lists become "- item" lines (nested lists indented), tables GFM tables, FAQ list answers stay separate', async () => {
    await product101();
    const md = await (await signal('platform-a', 101, 'md')).text();
    expect(md).toContain(
      '> A sturdy everyday product, made to last.\n\n' +
        'Shell is seam-sealed, 3-layer \\& breathable.\n\n' +
        '- Waterproof rating\n    - 20,000 mm\n- Pit zips\n\n' +
        '| Size | Chest |\n| --- | --- |\n| M | 96 cm |\n\n' +
        '© Northwind – café \\&lt;3\n\n## Details',
    );
    expect(md).toContain('### How do I wash it?\n\n- Machine wash cold\n- Tumble dry low\n');
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
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 5, SHOP));
    await enrich(t, storeId, '5');
    const doc = JSON.parse(await (await signal('platform-a', 5, 'jsonld')).text());
    expect(doc['@graph']).toHaveLength(1);
    expect(await (await signal('platform-a', 5, 'md')).text()).not.toContain('## FAQ');
  });
});

describe('hostile merchant text is inert in every format', () => {
  const HOSTILE_TITLE = '</script><script>alert(1)</script> [Buy](https://evil.test) \u2028 <img src=x onerror=alert(1)> # Tote \u0007';

  async function hostileProduct(): Promise<string> {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, {
      ...realisticProduct('platform-a', 66, SHOP),
      title: HOSTILE_TITLE,
      descriptionHtml: '<p>Nice</p><script>steal()</script><a href="javascript:alert(1)">x</a>',
      url: 'javascript:alert(1)',
      images: ['https://cdn.example/a.jpg', 'javascript:alert(2)', 'https://cdn.example/b.jpg?x=<script>'],
      options: ['Color</script>'],
      variants: realisticProduct('platform-a', 66, SHOP).variants.map((v) => ({
        ...v,
        title: '<b>[v](https://evil.test)</b>',
        sku: '`sku` \u0007',
        options: { 'Color</script>': '<img src=x onerror=alert(1)>[x](https://evil.test)' },
        url: 'javascript:alert(3)',
        image: 'javascript:alert(4)',
      })),
    });
    await enrich(t, storeId, '66', {
      summary: '![pixel](https://evil.test/p.gif) <b>bold</b>\n\n# Injected heading',
      highlights: ['[click me](javascript:alert(1))', '<script>alert(1)</script>ok', '- nested'],
      attributes: { '<i>Material</i>': '](https://evil.test) `code`' },
    });
    await addFaq(t, { storeId, entityType: 'product', entityRef: '66', question: '</script><b>Q</b> [x](https://evil.test)?', answer: '<p onclick="x">A</p><script>alert(1)</script><a href="javascript:alert(1)">bad</a> <a href="https://ok.test/">good</a>', status: 'approved' });
    return storeId;
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
    // The paragraph boundary stays a line break; the script's content and the javascript: link's target are gone.
    expect(p.description).toBe('Nice\nx');
  });

  test('.md escapes Markdown links, images, HTML and headings in merchant text', async () => {
    const storeId = await hostileProduct();
    const md = await (await signal('platform-a', 66, 'md')).text();
    expect(md).not.toMatch(/(^|[^\\])<(script|img|b|i)\b/);
    expect(md).not.toMatch(/(^|[^\\])\]\((?!<)/m);
    expect(md).not.toContain('\u0007');
    expect(md).not.toContain('\u2028');
    const headings = md.split('\n').filter((l) => /^#{1,6} /.test(l));
    expect(headings).toEqual([expect.stringMatching(/^# \\<\/script\\>/), '## Details', '## Variants', '## Highlights', '## FAQ', expect.stringMatching(/^### /), '## Links']);
    // Every link line is svc's own, and the only merchant link kept is a checked http(s) image.
    const links = [...md.matchAll(/(?<!\\)\[([^\]]*)\]\(<([^>]*)>\)/g)].map((m) => m[2]);
    const base = scoped('platform-a', storeId, 66);
    expect(links).toEqual(['https://cdn.example/a.jpg', 'https://cdn.example/b.jpg?x=%3Cscript%3E', `${base}.jsonld`, `${base}.llm`, `${base}.meta`, `${BASE}/api/v1/platform-a/stores/${storeId}/llms.txt`]);
  });

  test('.llm and .meta are valid JSON holding the text as text', async () => {
    await hostileProduct();
    const llm = await (await signal('platform-a', 66, 'llm')).json();
    expect(llm.url).toBeNull();
    expect(llm.summary).toBe('![pixel](https://evil.test/p.gif) bold # Injected heading');
    expect(llm.highlights).toEqual(['[click me](javascript:alert(1))', 'ok', '- nested']);
    expect(llm.faqs).toEqual([{ question: 'Q [x](https://evil.test)?', answer: 'A\nbad good' }]);
    const metaRaw = await (await signal('platform-a', 66, 'meta')).text();
    expect(metaRaw).not.toMatch(/[<>]/);
    expect(JSON.parse(metaRaw).signals.llm).toEqual(llm);
  });
});

describe('which products have signals', () => {
  test('404 for an unknown product, an unknown format and a product not enriched', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 9, SHOP));
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
    await t.webhooks.catalog.remove(storeId, '101', Date.parse('2026-01-11T00:00:00Z'));
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(404);
    await syncProduct(t, storeId, { ...realisticProduct('platform-a', 101, SHOP), updatedAt: Date.parse('2026-01-12T00:00:00Z') });
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(200);
  });

  test('404 for an inactive store that was not withdrawn; 410 for every format after app/uninstalled', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    await t.commitElsewhere("UPDATE stores SET status = 'inactive' WHERE id = ?", storeId);
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(404);
    await t.webhooks.stores.deactivate(storeId);
    for (const ext of ['jsonld', 'llm', 'md', 'meta']) {
      const res = await signal('platform-a', 101, ext);
      expect(res.status).toBe(410);
      expect((await res.json()).error).toBe('signals_withdrawn');
    }
  });

  test('410 after a real, signed app/uninstalled delivery', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    expect((await deliver('app/uninstalled', { id: 1, domain: SHOP })).status).toBe(200);
    expect((await t.webhooks.stores.get(storeId))!.signalsWithdrawnAt).not.toBeNull();
    expect((await signal('platform-a', 101, 'md')).status).toBe(410);
  });

  test('two stores of one platform with the same product id: the active store wins, two active stores are ambiguous (404)', async () => {
    const first = await enrichedProduct('platform-b', 500, 'hash-one');
    const second = await seedStore(t, 'platform-b', 'hash-two');
    await syncProduct(t, second, { ...realisticProduct('platform-b', 500, 'hash-two'), title: 'Second store shoe' });
    // Not enriched in the second store: the first store's product is the only candidate.
    expect(product(JSON.parse(await (await signal('platform-b', 500, 'jsonld')).text())).name).toBe('Trail Runner 2');
    await enrich(t, second, '500');
    const ambiguous = await signal('platform-b', 500, 'jsonld');
    expect(ambiguous.status).toBe(404);
    expect((await ambiguous.json()).detail).toContain('more than one store');
    await t.webhooks.stores.deactivate(first);
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
    const storeId = await seedStore(t, 'platform-a', SHOP);
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
    expect(p.hasVariant.map((v: any) => v.offers.price)).toEqual(['79.00', '79.00', '79.00']);
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
    await t.request(`/api/v1/admin/faqs/${faq.id}`, { method: 'DELETE', headers: bearer(await t.keyWith('admin')) });
    await etag();
    expect(etags.size).toBe(5);
    expect(await (await signal('platform-a', 101, 'llm')).json()).toMatchObject({ summary: 'Changed summary.', faqs: [{ question: 'Does it fit a laptop?' }] });
  });

  test('a change committed by another database connection is seen despite the render cache (at once on SQLite, once its notification is heard on PostgreSQL)', async () => {
    const storeId = await enrichedProduct('platform-a', 101, SHOP);
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(200);
    await t.commitElsewhere('UPDATE stores SET signals_withdrawn_at = 1, status = ? WHERE id = ?', 'inactive', storeId);
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
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    const put = await enrich(t, storeId, '101', { summary: '<b>Great</b>\u0000 tote', highlights: ['<i>One</i>', '  '], attributes: { Size: '<em>L</em>' } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ productId: '101', summary: 'Great tote', highlights: ['One'], attributes: { Size: 'L' } });
    const got = await t.request(url(storeId, '101'), { headers: bearer(await t.keyWith('admin')) });
    expect(await got.json()).toMatchObject({ summary: 'Great tote' });
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(200);
    expect((await t.request(url(storeId, '101'), { method: 'DELETE', headers: bearer(await t.keyWith('admin')) })).status).toBe(204);
    expect((await t.request(url(storeId, '101'), { headers: bearer(await t.keyWith('admin')) })).status).toBe(404);
    expect((await signal('platform-a', 101, 'jsonld')).status).toBe(404);
  });

  test('the catalogue list and product views say when each product was enriched (null when not)', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    await syncProduct(t, storeId, realisticProduct('platform-a', 102, SHOP));
    expect((await enrich(t, storeId, '102')).status).toBe(200);
    const admin = bearer(await t.keyWith('admin'));
    const list = await (await t.request(`/api/v1/admin/stores/${storeId}/products`, { headers: admin })).json();
    expect(list.items.map((p: { productId: string; enrichedAt: string | null }) => [p.productId, p.enrichedAt !== null])).toEqual([['101', false], ['102', true]]);
    const one = await (await t.request(`/api/v1/admin/stores/${storeId}/products/102`, { headers: admin })).json();
    expect(Date.parse(one.enrichedAt)).toBeGreaterThan(0);
  });

  test('404 for an unknown store or a product not in the catalogue; admin scope required', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    expect((await enrich(t, 'nope', '101')).status).toBe(404);
    expect((await enrich(t, storeId, '101')).status).toBe(404);
    await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
    expect((await t.request(url(storeId, '101'), { method: 'PUT', headers: bearer(await t.keyWith('dashboard:read')) })).status).toBe(403);
  });

  test('lengths and counts are capped (400)', async () => {
    const storeId = await seedStore(t, 'platform-a', SHOP);
    await syncProduct(t, storeId, realisticProduct('platform-a', 101, SHOP));
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
