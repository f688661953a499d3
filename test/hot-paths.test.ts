import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { POSTGRES_MODE } from './helpers/engine.ts';
import { addFaq, enrich, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';
import { aheadOfTheApp } from '../src/lib/hot-route.ts';

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
  const storeId = await seedStore(t, 'platform-a', SHOP);
  await syncProduct(t, storeId, realisticProduct('platform-a', 424242, SHOP));
  expect((await enrich(t, storeId, '424242')).status).toBe(200);
  await addFaq(t, { storeId, entityType: 'product', entityRef: '424242', question: 'Does it fit?', answer: 'Yes.', status: 'approved' });
  widgetKey = (await t.keys.create({ name: 'widget', scopes: ['products:read'], allowedDomains: ['www.hot-shop.test'], storeId })).key;
  // A widget key is looked up in storage at its first use (a promise then), and verified in memory after.
  expect((await t.app.fetch(new Request('http://localhost/api/v1/public/faqs?type=product&ref=1', { headers: { 'X-Api-Key': widgetKey, Origin: 'https://www.hot-shop.test' } }))).status).toBe(200);
  await t.changesHeard();
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
      const get = () => t.app.fetch(new Request(`http://localhost${path}`, { headers: headers() }));
      // SQLite answers the reads at once; PostgreSQL's first read waits for the database, and what it cached is answered at once.
      if (POSTGRES_MODE) await get();
      const answer = get();
      expect(answer instanceof Promise ? 'a promise' : 'a response').toBe('a response');
      expect((await answer).status).toBe(200);
    });
  }
});

describe('hot public GETs answered ahead of the app (lib/hot-route.ts, as the server serves them)', () => {
  /** Bun's router hands a route handler the request with its decoded parameters (and, from a client, its Host header). */
  const routed = (path: string, params: Record<string, string>, init: RequestInit = {}) =>
    Object.assign(new Request(`http://localhost${path}`, { ...init, headers: { host: 'localhost', ...(init.headers as Record<string, string> | undefined) } }), { params });
  const lanes = (app: Parameters<typeof aheadOfTheApp>[0] = t.app) => {
    const fallbacks: string[] = [];
    const routes = aheadOfTheApp(app, t.observability.observer, (request) => {
      fallbacks.push(new URL(request.url).pathname);
      return t.app.handle(request);
    });
    return { routes, fallbacks };
  };
  const PRODUCT = '/api/v1/platform-a/products/:file';

  test('every hot route is one of the app\'s GET routes', () => {
    const routes = new Set(t.app.routes.filter((route) => route.method === 'GET').map((route) => route.path.replace(/(.)\/$/, '$1')));
    for (const hot of t.app.hotRoutes) expect(routes.has(hot.path)).toBe(true);
    expect(t.app.hotRoutes.map((route) => route.path)).toContain(PRODUCT);
  });

  test('an ordinary request is answered by the route itself, observed (request id, nosniff, counted)', async () => {
    const { routes, fallbacks } = lanes();
    const res = await routes[PRODUCT]!.GET(routed('/api/v1/platform-a/products/424242.md', { file: '424242.md' }, { headers: { 'x-request-id': 'hot-1' } }));
    expect(fallbacks).toEqual([]);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('hot-1');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await t.observability.metrics.render()).toContain(`svc_http_requests_total{route="${PRODUCT}",method="GET",status="2xx"}`);
  });

  test('a 304 and a HEAD answered ahead are counted under their own status class and method, with the request id and nosniff', async () => {
    const { routes, fallbacks } = lanes();
    const badge = routes['/api/v1/public/probe/badge']!.GET;
    const path = '/api/v1/public/probe/badge?domain=www.hot-shop.test';
    const first = await badge(routed(path, {}));
    const unchanged = await badge(routed(path, {}, { headers: { 'if-none-match': first.headers.get('etag')!, 'x-request-id': 'hot-304' } }));
    const head = await badge(routed(path, {}, { method: 'HEAD', headers: { 'x-request-id': 'hot-head' } }));
    expect(fallbacks).toEqual([]);
    expect([first.status, unchanged.status, head.status]).toEqual([200, 304, 200]);
    expect([unchanged.headers.get('x-request-id'), head.headers.get('x-request-id')]).toEqual(['hot-304', 'hot-head']);
    for (const res of [first, unchanged, head]) expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const metrics = await t.observability.metrics.render();
    expect(metrics).toContain('svc_http_requests_total{route="/api/v1/public/probe/badge",method="GET",status="3xx"} 1');
    expect(metrics).toContain('svc_http_requests_total{route="/api/v1/public/probe/badge",method="HEAD",status="2xx"} 1');
    expect(t.logLines().filter((line) => line.requestId === 'hot-304' || line.requestId === 'hot-head').map((line) => [line.method, line.status, line.route])).toEqual([
      ['GET', 304, '/api/v1/public/probe/badge'],
      ['HEAD', 200, '/api/v1/public/probe/badge'],
    ]);
  });

  test('a parameter with a malformed escape (Bun decodes it as U+FFFD) and a declared body are left to the app; a well-formed escape is answered ahead', async () => {
    const { routes, fallbacks } = lanes();
    const product = routes[PRODUCT]!.GET;
    await product(routed('/api/v1/platform-a/products/%zz.md', { file: '\uFFFD.md' }));
    await product(routed('/api/v1/platform-a/products/424242.md', { file: '424242.md' }, { headers: { 'content-length': '0' } }));
    expect(fallbacks).toEqual(['/api/v1/platform-a/products/%zz.md', '/api/v1/platform-a/products/424242.md']);
    const escaped = await product(routed('/api/v1/platform-a/products/42424%32.md', { file: '424242.md' }));
    expect(fallbacks).toHaveLength(2);
    expect(escaped.status).toBe(200);
    expect(await escaped.text()).toContain('Does it fit?');
  });

  test('what a route throws is answered as the app answers it: an ApiError as its JSON error, anything else as a logged 500', async () => {
    const { routes } = lanes();
    const refused = await routes['/api/v1/public/probe/badge']!.GET(routed('/api/v1/public/probe/badge', {}));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_query');
    expect(refused.headers.get('x-svc-error-code')).toBeNull();

    const broken = lanes({ hotRoutes: [{ path: '/broken', answer: () => { throw new Error('broken route'); } }], errorAnswer: t.app.errorAnswer });
    const res = await broken.routes['/broken']!.GET(routed('/broken', {}, { headers: { 'x-request-id': 'hot-broken' } }));
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toBe('internal_error');
    expect(t.logLines().find((line) => line.msg === 'unhandled error')).toMatchObject({ requestId: 'hot-broken' });
  });
});
