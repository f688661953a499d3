import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { addFaq, enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

// Issue 12 item 3: the public GETs are answered without a promise. Elysia guesses from each hook's
// and handler's source whether it may be async and then answers through a promise (and prepares
// cookies, headers and query for every route when a hook takes its context whole); the request
// gate (src/app.ts), the route hook (observability) and syncRoute (lib/sync-route.ts) are written
// so it does not. A hook or handler that reintroduces the pattern fails here, naming the route.
let t: TestApp;
let widgetKey: string;
const SHOP = 'hot.myplatform-a.com';
beforeAll(async () => {
  t = await makeTestApp();
  const storeId = seedStore(t, 'platform-a', SHOP);
  syncProduct(t, storeId, realisticProduct('platform-a', 424242, SHOP));
  expect((await enrich(t, storeId, '424242')).status).toBe(200);
  await addFaq(t, { storeId, entityType: 'product', entityRef: '424242', question: 'Does it fit?', answer: 'Yes.', status: 'approved' });
  widgetKey = t.keys.create({ name: 'widget', scopes: ['products:read'], allowedDomains: ['www.hot-shop.test'], storeId }).key;
});
afterAll(() => t.close());

describe('hot public GETs', () => {
  const cases: [string, () => Record<string, string>][] = [
    ...['jsonld', 'llm', 'md', 'meta'].map((format): [string, () => Record<string, string>] => [`/api/v1/platform-a/products/424242.${format}`, () => ({})]),
    ['/api/v1/public/faqs?type=product&ref=424242', () => ({ 'X-Api-Key': widgetKey, Origin: 'https://www.hot-shop.test' })],
    ['/embed.js', () => ({ 'Accept-Encoding': 'gzip' })],
    ['/api/v1/public/probe/badge?domain=www.hot-shop.test', () => ({})],
    ['/robots.txt', () => ({})],
  ];
  for (const [path, headers] of cases) {
    test(`GET ${path} is answered synchronously, without a promise`, async () => {
      const answer = t.app.fetch(new Request(`http://localhost${path}`, { headers: headers() }));
      expect(answer instanceof Promise ? 'a promise' : 'a response').toBe('a response');
      expect((await answer).status).toBe(200);
    });
  }
});
