import { describe, expect, test } from 'bun:test';
import { detectContext, fromUrlPath, PLATFORM_B_RETRIES, PLATFORM_B_RETRY_DELAY_MS } from '../../widget/detect.ts';
import { makePage, type Page } from '../helpers/dom.ts';

const noWait = async () => {};
const detect = (page: Page, wait: (ms: number) => Promise<void> = noWait) =>
  detectContext({ document: page.document, window: page.window as unknown as Window, script: page.script, wait });

const setGlobal = (page: Page, value: unknown) => {
  (page.window as unknown as Record<string, unknown>).BCData = value;
};

/** Each detection source, in the spec's priority order, as something a page can have. */
const SOURCES: { name: string; method: string; expected: [string, string]; apply(page: Page): void }[] = [
  { name: 'explicit attributes', method: 'explicit', expected: ['page', 'shipping'], apply: (p) => { p.script.setAttribute('data-entity-type', 'page'); p.script.setAttribute('data-entity-id', 'shipping'); } },
  { name: 'platform-B global', method: 'bc-window', expected: ['product', '77'], apply: (p) => setGlobal(p, { product_attributes: { product_id: 77 } }) },
  { name: 'platform-B product container', method: 'bc-product-attr', expected: ['product', '88'], apply: (p) => p.document.body.insertAdjacentHTML('afterbegin', '<div data-product-id="88"></div>') },
  { name: 'platform-B category container', method: 'bc-category-attr', expected: ['category', '19'], apply: (p) => p.document.body.insertAdjacentHTML('afterbegin', '<div data-category-id="19"></div>') },
  { name: 'OpenGraph product', method: 'og-meta', expected: ['product', 'SKU-1'], apply: (p) => p.document.head.insertAdjacentHTML('beforeend', '<meta property="og:type" content="product"><meta property="product:retailer_item_id" content="SKU-1">') },
  { name: 'platform-C body classes', method: 'body-class', expected: ['product', '451'], apply: (p) => p.document.body.classList.add('single-product', 'postid-451') },
];
const URL_SOURCE = { name: 'URL path', method: 'url-path', expected: ['product', 'blue-shirt'] as [string, string] };

describe('widget context detection: each source alone', () => {
  for (const source of SOURCES) {
    test(`detects via ${source.name} (${source.method})`, async () => {
      const page = makePage('https://shop.example.com/');
      source.apply(page);
      expect(await detect(page)).toEqual({ type: source.expected[0], id: source.expected[1], method: source.method } as never);
    });
  }
  test('detects via the URL path (url-path)', async () => {
    expect(await detect(makePage('https://shop.example.com/products/blue-shirt'))).toEqual({ type: 'product', id: 'blue-shirt', method: 'url-path' });
  });
  test('nothing detected on a page with no signal', async () => {
    expect(await detect(makePage('https://shop.example.com/about-us'))).toBeNull();
  });
});

describe('widget context detection: conflicts resolve by the spec priority', () => {
  const all = [...SOURCES, { ...URL_SOURCE, apply: () => {} }];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const [winner, loser] = [all[i]!, all[j]!];
      test(`${winner.name} beats ${loser.name}`, async () => {
        const page = makePage(loser === all.at(-1) || winner === all.at(-1) ? 'https://shop.example.com/products/blue-shirt' : 'https://shop.example.com/');
        loser.apply(page);
        winner.apply(page);
        expect((await detect(page))?.method).toBe(winner.method);
      });
    }
  }
});

describe('platform-B retry timing', () => {
  test('the global populated after the first wait is found on the 2nd try', async () => {
    const page = makePage('https://shop.example.com/products/slug-from-url');
    const waits: number[] = [];
    const wait = async (ms: number) => {
      waits.push(ms);
      setGlobal(page, { product_attributes: { product_id: 5150 } });
    };
    expect(await detect(page, wait)).toEqual({ type: 'product', id: '5150', method: 'bc-window' });
    expect(waits).toEqual([PLATFORM_B_RETRY_DELAY_MS]);
  });

  test('a global that stays empty is retried 3 times, 500 ms apart, then later sources apply', async () => {
    const page = makePage('https://shop.example.com/products/slug-from-url');
    setGlobal(page, { product_attributes: {} });
    const waits: number[] = [];
    const result = await detect(page, async (ms) => {
      waits.push(ms);
    });
    expect(waits).toEqual([500, 500, 500]);
    expect(PLATFORM_B_RETRIES).toBe(3);
    expect(result).toEqual({ type: 'product', id: 'slug-from-url', method: 'url-path' });
  });

  test('no waiting when the explicit attributes or a platform-B container already answer', async () => {
    const page = makePage('https://shop.example.com/', '<div data-category-id="3"></div>');
    const waits: number[] = [];
    await detect(page, async (ms) => {
      waits.push(ms);
    });
    expect(waits).toEqual([]);
  });
});

describe('URL patterns', () => {
  const cases: [string, [string, string] | null][] = [
    ['/products/blue-shirt', ['product', 'blue-shirt']],
    ['/products/blue-shirt/', ['product', 'blue-shirt']],
    ['/fr/products/chemise', ['product', 'chemise']],
    ['/collections/summer/products/blue-shirt', ['product', 'blue-shirt']],
    ['/collections/summer', ['category', 'summer']],
    ['/pages/shipping', ['page', 'shipping']],
    ['/product/red-mug', ['product', 'red-mug']],
    ['/categories/mugs', ['category', 'mugs']],
    ['/category/mugs', ['category', 'mugs']],
    ['/products/caf%C3%A9', ['product', 'café']],
    // near misses
    ['/products/', null],
    ['/products', null],
    ['/productsx/a', null],
    ['/xproducts/a', null],
    ['/products/a/b', null],
    ['/collections/', null],
    ['/pages', null],
    ['/categoryx/a', null],
    ['/blog/products/a', null],
    ['/products/%E0%A4%A', null],
  ];
  for (const [path, expected] of cases) {
    test(`${path} -> ${expected ? expected.join('/') : 'nothing'}`, () => {
      const result = fromUrlPath(path);
      expect(result ? [result.type, result.id] : null).toEqual(expected);
    });
  }
});
