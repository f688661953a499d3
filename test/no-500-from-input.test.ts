import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { addFaq, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

// Issue 11, item 7: no 500 from input. Every admin and public route is walked with hostile input
// (prototype-named keys anywhere in a body, non-string values where strings are expected, malformed
// percent-encoding in the path and query); every answer must be a 4xx with the error shape (or a
// success), never a 5xx, and no payload may reach Object.prototype.

let t: TestApp;
let ids: Record<string, string[]>;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await makeTestApp({ env: { SVC_RATE_ANONYMOUS: '1000000', SVC_RATE_AUTHED: '1000000', SVC_RATE_AGENT: '1000000', SVC_PLATFORM_A_APP_SECRET: 'app-secret' } });
  const admin = await t.keyWith('admin');
  const storeId = await seedStore(t, 'platform-a', 'walk.myplatform-a.com');
  const widgetKey = (await t.keys.create({ scopes: ['products:read'], storeId, name: 'widget' })).key;
  // A verified lead's token (mode 1) lets hostile bodies through probe authentication to the parser.
  const { apiToken } = await t.leads.create('scanner@example.com', true);
  auth = { ...bearer(admin), 'x-probe-token': apiToken, 'x-api-key': widgetKey };
  const product = realisticProduct('platform-a', 1, 'walk.myplatform-a.com');
  await syncProduct(t, storeId, product);
  const faq = await addFaq(t, { storeId, entityType: 'product', entityRef: product.productId, question: 'Q?', answer: 'A.' });
  const { lead } = await t.leads.create('walker@example.com');
  ids = {
    id: [storeId, faq.id, lead.id],
    storeId: [storeId],
    productId: [product.productId, '1'],
    file: ['1.jsonld', '1.md', 'sitemap.xml'],
    name: ['x.js'],
  };
});
afterAll(() => t?.close());

/** Path segments that broke decoding or lookups: malformed percent-encoding, NUL (PostgreSQL's text refuses it) and prototype names. */
const HOSTILE_SEGMENTS = ['%E0%A4%A', '%zz', '%', '%zz.jsonld', '%E0%A4%A.md', '__proto__', 'constructor', '__proto__.jsonld', 'hasOwnProperty', '%00', '%00.jsonld', 'a%00b.md'];
const HOSTILE_QUERY = '?__proto__=1&constructor=x&cursor=%zz&limit=%E0%A4%A&domain=%zz&storeId=__proto__&groupBy=constructor&hostname[]=1&from=%&ref=%00&type=product&email=%00&q=%00';
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', '__defineGetter__', '__defineSetter__', '__lookupGetter__', 'hasOwnProperty', 'toString', 'valueOf', 'isPrototypeOf'];
const NON_STRINGS: unknown[] = [1, -1.5, true, null, [], ['x'], {}, { value: 'x' }];

/** JSON text with every prototype-named key, at the top and nested, as JSON.parse keeps them (own keys). */
function protoObject(inner: string): string {
  return `{${PROTO_KEYS.map((key) => `"${key}":${inner}`).join(',')}}`;
}

/** Hostile bodies for a route: prototype keys everywhere, and each known field given non-string values. */
function bodiesFor(fields: string[]): string[] {
  const proto = protoObject('{"polluted":true,"length":1e9}');
  const bodies = [
    proto,
    protoObject('1'),
    protoObject('null'),
    `{"__proto__":[1,2],"constructor":{"prototype":{"polluted":true}}}`,
    // A telemetry-shaped payload with prototype keys in every nested object.
    `{"hostname":"walk.example.com","signals":${protoObject('{"value":1}')},"quality":${protoObject('1')},"platform":${protoObject('1')},"svc":${protoObject('1')},"signalPresence":${protoObject('true')},${PROTO_KEYS.map((k) => `"${k}":{"polluted":true}`).join(',')}}`,
    `{"scans":[${proto},{"hostname":"walk.example.com","signals":${proto}}]}`,
    '[]',
    '"text"',
    '1',
    'null',
  ];
  for (const field of fields) {
    for (const value of [...NON_STRINGS, '\u0000', 'a\u0000b']) bodies.push(JSON.stringify({ [field]: value }));
    bodies.push(`{"${field}":${proto}}`);
  }
  for (const nested of NESTED_BODIES) bodies.push(JSON.stringify(nested));
  // Every field non-string at once (so a route that checks the first field only is still walked deeper).
  for (const value of NON_STRINGS) bodies.push(JSON.stringify(Object.fromEntries(fields.map((field) => [field, value]))));
  return bodies;
}

interface RouteInfo {
  method: string;
  path: string;
  fields: string[];
}

/** Fields of the routes that validate their body in code rather than by schema. */
const CODE_VALIDATED_FIELDS: Record<string, string[]> = {
  '/api/v1/admin/stores/:id/settings': ['itemCondition', 'returnPolicy', 'shipping'],
  '/api/v1/probe/telemetry': ['hostname', 'signals', 'url', 'scannedAt', 'platform', 'pageType', 'svc', 'signalPresence', 'quality', 'country', 'vertical'],
};
/** Nested shapes with wrong types inside (a field's value is an object or array of the wrong kinds). */
const NESTED_BODIES = [
  { returnPolicy: { countries: [1, null, {}], window: { days: 1 } }, shipping: [{ countries: 'DE', price: {}, handlingDays: { min: 'a', max: [] }, transitDays: 'x' }] },
  { shipping: 'text' },
  { shipping: [null, 1, 'x', []] },
  { hostname: 'walk.example.com', signals: { title: { value: 1, length: 'x' }, headings: { h1: [1, {}] }, openGraph: { a: 1 }, jsonLd: {} }, quality: { grade: 1, percentage: 'x' } },
];

function routes(): RouteInfo[] {
  return (t.app.routes as { method: string; path: string; hooks?: { body?: { properties?: Record<string, unknown> } } }[])
    .filter((route) => route.path.startsWith('/api/') || route.path === '/' || route.path.startsWith('/console') || route.path.startsWith('/assets/'))
    .map((route) => ({ method: route.method, path: route.path, fields: CODE_VALIDATED_FIELDS[route.path] ?? Object.keys(route.hooks?.body?.properties ?? {}) }));
}

/** The route's path with each parameter given a real id or a hostile segment. */
function pathsFor(path: string): string[] {
  const params = [...path.matchAll(/:(\w+)|\*/g)].map((match) => match[1] ?? '*');
  if (params.length === 0) return [path, `${path}/%E0%A4%A`, `${path}%zz`];
  const paths = new Set<string>();
  for (const [index, param] of params.entries()) {
    for (const segment of [...(ids[param] ?? []), ...HOSTILE_SEGMENTS]) {
      let n = 0;
      paths.add(path.replace(/:(\w+)|\*/g, (_, name: string | undefined) => (n++ === index ? segment : (ids[name ?? '']?.[0] ?? 'x'))));
    }
  }
  return [...paths];
}

const failures: string[] = [];

async function expectNo5xx(label: string, path: string, init: RequestInit): Promise<void> {
  const response = await t.request(path, init);
  if (response.status >= 500) failures.push(`${label} ${path} -> ${response.status} ${(await response.text()).slice(0, 200)}`);
  else if (response.status >= 400 && response.headers.get('content-type')?.includes('application/json')) {
    const body = (await response.json()) as { error?: unknown; detail?: unknown };
    if (typeof body.error !== 'string' || typeof body.detail !== 'string') failures.push(`${label} ${path} -> ${response.status} without the error shape`);
  } else {
    await response.arrayBuffer();
  }
}

describe('no 500 from input', () => {
  test('every admin and public route answers hostile paths, queries and bodies without a 5xx', async () => {
    const walked = routes();
    expect(walked.length).toBeGreaterThan(40);
    for (const route of walked) {
      const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
      for (const path of pathsFor(route.path)) {
        await expectNo5xx(route.method, path + HOSTILE_QUERY, { method: route.method, headers: auth });
        if (!hasBody) continue;
        for (const body of bodiesFor(route.fields)) {
          await expectNo5xx(`${route.method} ${body.slice(0, 60)}`, path, { method: route.method, body, headers: { 'content-type': 'application/json', ...auth } });
        }
      }
    }
    expect(failures).toEqual([]);
    // Nothing any payload carried reached the prototype every object shares.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  }, 120_000);

  test('malformed percent-encoding in a path, or an escaped NUL (which PostgreSQL cannot look up), is 400 with the error shape', async () => {
    for (const path of ['/api/v1/public/faqs/%E0%A4%A', '/api/v1/platform-a/products/%zz.jsonld', '/api/v1/admin/faqs/%E0%A4%A', '/api/v1/admin/stores/%00', '/api/v1/platform-a/products/1%00.md', '/api/v1/admin/leads/a%00b/verify']) {
      const response = await t.request(path, { headers: auth });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'malformed_path' });
    }
  });
});

describe('prototype-named keys anywhere in a JSON body are refused with 400 reserved_key', () => {
  const scanCount = async () => Number((await t.query("SELECT count(*) AS n FROM scans WHERE hostname = 'reserved.example.com'"))[0]!.n);
  const post = (path: string, body: string) => t.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...auth } });

  test('a telemetry payload with constructor deep inside signals is 400 naming the key, nothing stored', async () => {
    const response = await post('/api/v1/probe/telemetry', '{"hostname":"reserved.example.com","signals":{"jsonLd":[{"@type":"Product","offers":{"constructor":{"prototype":1}}}]}}');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'reserved_key', key: 'constructor' });
    expect(await scanCount()).toBe(0);
  });

  test('a key spelt with \\u escapes is refused too', async () => {
    const response = await post('/api/v1/probe/telemetry', '{"hostname":"reserved.example.com","signals":{},"\\u005f_proto__":{"polluted":true}}');
    expect(await response.json()).toMatchObject({ error: 'reserved_key', key: '__proto__' });
    expect(await scanCount()).toBe(0);
  });

  test('a bulk item with __proto__ refuses the request', async () => {
    const response = await post('/api/v1/probe/scan-bulk', '{"scans":[{"hostname":"reserved.example.com","signals":{}},{"hostname":"reserved.example.com","signals":{},"__proto__":{"x":1}}]}');
    expect(await response.json()).toMatchObject({ error: 'reserved_key', key: '__proto__' });
    expect(await scanCount()).toBe(0);
  });

  test('a bulk item with a key spelt with \\u escapes, after clean items, refuses the request', async () => {
    const clean = '{"hostname":"reserved.example.com","signals":{}}';
    const response = await post('/api/v1/probe/scan-bulk', `{"scans":[${clean},${clean},{"hostname":"reserved.example.com","signals":{"title":{"\\u0063onstructor":1}}}]}`);
    expect(await response.json()).toMatchObject({ error: 'reserved_key', key: 'constructor' });
    expect(await scanCount()).toBe(0);
  });

  test('a bulk item whose reserved key straddles a 64 KiB slice of the structure scan refuses the request', async () => {
    // The structure scan runs in 64 KiB slices: put "valueOf" across the first slice end at each offset.
    for (const cut of [1, 4, 8]) {
      const head = '{"scans":[{"hostname":"reserved.example.com","signals":{},"pad":"';
      const tail = '","valueOf":1}]}';
      const pad = 'p'.repeat(64 * 1024 - head.length - '","'.length - cut);
      const body = `${head}${pad}${tail}`;
      expect(body.slice(64 * 1024 - cut, 64 * 1024 + 1)).toStartWith('valueOf'.slice(0, cut));
      const response = await post('/api/v1/probe/scan-bulk', body);
      expect(await response.json()).toMatchObject({ error: 'reserved_key', key: 'valueOf' });
    }
    expect(await scanCount()).toBe(0);
  });

  test('an admin body whose string field is an object with toString is 400, not 500', async () => {
    const response = await t.request('/api/v1/admin/faqs', { method: 'POST', body: '{"question":{"toString":1},"answer":"a"}', headers: { 'content-type': 'application/json', ...auth } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'reserved_key', key: 'toString' });
  });

  test('the same words inside string values, and as parts of longer keys, are accepted', async () => {
    const payload = { hostname: 'reserved.example.com', signals: { title: { value: '{"constructor": 1, "__proto__": 2}' } }, notes: { toStringValue: 1, my_constructor: 2, valueO: 3, prototypes: 4 } };
    const response = await post('/api/v1/probe/telemetry', JSON.stringify(payload));
    expect(response.status).toBe(204);
    expect(await scanCount()).toBe(1);
    const bulk = await post('/api/v1/probe/scan-bulk', JSON.stringify({ scans: [{ ...payload, url: 'https://reserved.example.com/1' }, { ...payload, url: 'https://reserved.example.com/2', signals: { title: { value: 'constructor' } } }] }));
    expect(await bulk.json()).toMatchObject({ inserted: 2, errors: [] });
    expect(await scanCount()).toBe(3);
  });
});
