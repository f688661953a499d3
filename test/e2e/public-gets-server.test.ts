import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import http from 'node:http';
import { bulkBodyLimit } from '../../src/telemetry/pipeline.ts';
import { makeTestApp, tempDir, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { onceHeard } from '../helpers/engine.ts';
import { scanPayload } from '../helpers/probe.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { addFaq, enrich, patchFaq, realisticProduct, seedStore, syncProduct } from '../helpers/signals.ts';

// Issue 12 item 3: the server answers the hot public GETs ahead of the app's router (src/server.ts).
// Whatever path a request takes there, its answer is the app's: each request below is sent to a
// spawned server and, in this process, through the app over the same database, and both answers
// must match (status, headers, body), apart from what differs per request or per transport.
const SHOP = 'lane.myplatform-a.com';
const ORIGIN = 'https://www.lane-shop.test';
const BASE_URL = 'http://svc.lane.test';
let data: ReturnType<typeof tempDir>;
let t: TestApp;
let server: SpawnedServer;
let storeId: string;
let widgetKey: string;
let widgetKeyId: string;
let faqId: string;

beforeAll(async () => {
  data = tempDir('svc-lane-');
  t = await makeTestApp({ dataDir: data.dir, env: { SVC_BASE_URL: BASE_URL } });
  storeId = await seedStore(t, 'platform-a', SHOP);
  await syncProduct(t, storeId, realisticProduct('platform-a', 515151, SHOP));
  expect((await enrich(t, storeId, '515151')).status).toBe(200);
  faqId = (await addFaq(t, { storeId, entityType: 'product', entityRef: '515151', question: 'Does it fit?', answer: '<p>Yes.</p>', status: 'approved' })).id;
  const created = await t.keys.create({ name: 'widget', scopes: ['products:read'], allowedDomains: ['www.lane-shop.test'], storeId });
  widgetKey = created.key;
  widgetKeyId = created.record.id;
  const lead = await t.leads.create('lane@example.com', true);
  const scan = await t.request('/api/v1/probe/telemetry', { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': lead.apiToken }, body: JSON.stringify(scanPayload({ hostname: 'www.lane-shop.test' })) });
  expect(scan.status).toBe(204);
  server = await spawnServer({ dataDir: data.dir, env: { SVC_BASE_URL: BASE_URL } });
}, 30_000);
afterAll(async () => {
  await server?.stop();
  t?.close();
  data?.remove();
});

/** Headers that differ per request (the id, the date) or are the transport's (connection; the length of a body, which is compared itself). */
const PER_REQUEST = new Set(['x-request-id', 'date', 'connection', 'keep-alive']);

async function snapshot(res: Response, method: string) {
  // A HEAD answer's length is the GET's, which the app's Response states and the wire carries.
  const headers = [...res.headers].filter(([name]) => !PER_REQUEST.has(name) && (name !== 'content-length' || method === 'HEAD')).sort();
  // A HEAD answer's body is dropped on the wire; the app's Response still holds it.
  const body = method === 'HEAD' ? '' : Buffer.from(await res.arrayBuffer()).toString('base64');
  return { status: res.status, headers, body };
}

/**
 * `route` sent to the server exactly as written. Bun's fetch rewrites some request targets before
 * sending them (`//embed.js` goes out as `/embed.js`, `/./x` as `/x`), so it would compare the app's
 * answer to one path with the server's answer to another; node:http sends the path as given.
 */
async function asSent(route: string, init: RequestInit): Promise<Response> {
  const { hostname, port } = new URL(server.url);
  const headers = Object.fromEntries(new Headers(init.headers));
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port, path: route, method: init.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const received = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) received.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const body = res.statusCode === 304 || res.statusCode === 204 ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status: res.statusCode, headers: received }));
      });
      res.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/** The same request through the spawned server (sent as written) and through the app in this process. */
async function bothWays(route: string, init: RequestInit = {}) {
  const method = init.method ?? 'GET';
  const viaServer = await asSent(route, init);
  const viaApp = await t.request(route, init);
  expect(viaServer.headers.get('x-request-id')).toBeTruthy();
  return { server: await snapshot(viaServer, method), app: await snapshot(viaApp, method) };
}

const product = (format: string) => `/api/v1/platform-a/products/515151.${format}`;
const widget = (extra: Record<string, string> = {}) => ({ headers: { 'X-Api-Key': widgetKey, Origin: ORIGIN, ...extra } });
const BADGE = '/api/v1/public/probe/badge?domain=www.lane-shop.test';

describe('public GETs answered by the server ahead of the router', () => {
  const cases: [string, string | (() => string), () => RequestInit][] = [
    ...['jsonld', 'llm', 'md', 'meta'].map((format): [string, string, () => RequestInit] => [`.${format}`, product(format), () => ({})]),
    ['.jsonld of the store-scoped URL', () => `/api/v1/platform-a/stores/${storeId}/products/515151.jsonld`, () => ({})],
    ['an unknown product', '/api/v1/platform-a/products/999.md', () => ({})],
    ['an unknown format', '/api/v1/platform-a/products/515151.txt', () => ({})],
    ['a percent-escaped product id', '/api/v1/platform-a/products/51%35151.md', () => ({})],
    ['a malformed escape', '/api/v1/platform-a/products/%zz.md', () => ({})],
    // Bun's router decodes a parameter's escapes (a malformed one as U+FFFD) and matches the rest
    // of the path as sent; the server answers these ahead of the app only where the app would
    // answer the same (lib/hot-route.ts).
    ['a cut-off escape', '/api/v1/platform-a/products/515151%2.md', () => ({})],
    ['an escape of U+FFFD itself', '/api/v1/platform-a/products/%EF%BF%BD.md', () => ({})],
    ['an escaped NUL in the product id', '/api/v1/platform-a/products/51%005151.md', () => ({})],
    ['an escaped NUL in the store id', '/api/v1/platform-a/stores/%00/products/515151.md', () => ({})],
    ['an escaped slash in the product id', '/api/v1/platform-a/products/51%2F5151.md', () => ({})],
    ['a doubled slash', '/api/v1/platform-a//products/515151.md', () => ({})],
    ['an escape in a literal segment', '/api/v1/platform-%61/products/515151.md', () => ({})],
    ['an upper-case literal segment', '/API/v1/platform-a/products/515151.md', () => ({})],
    ['an escape in /embed.js', '/%65mbed.js', () => ({})],
    // Paths are matched as sent, every route alike: a doubled slash is another path (404), a dot
    // segment is resolved (by the URL parser both ways) before routing.
    ['a leading doubled slash: //embed.js', '//embed.js', () => ({})],
    ['three leading slashes: ///embed.js', '///embed.js', () => ({})],
    ['a leading doubled slash before a signal', `/${product('md')}`, () => ({})],
    ['a leading doubled slash before the badge', `/${BADGE}`, () => ({})],
    ['a leading doubled slash before public FAQs', '//api/v1/public/faqs?type=product&ref=515151', () => widget()],
    ['a dot segment: /./embed.js', '/./embed.js', () => ({})],
    ['a dot-dot segment before a signal', `/api/v1/x/..${product('md').slice('/api/v1'.length)}`, () => ({})],
    ['an escaped dot segment', '/%2e/embed.js', () => ({})],
    ['public FAQs with a trailing slash', '/api/v1/public/faqs/?type=product&ref=515151', () => widget()],
    ['a trailing slash', `${product('md')}/`, () => ({})],
    ['another platform', '/api/v1/platform-b/products/515151.md', () => ({})],
    ['HEAD of .jsonld', product('jsonld'), () => ({ method: 'HEAD' })],
    ['POST to a signal URL', product('md'), () => ({ method: 'POST' })],
    ['public FAQs', '/api/v1/public/faqs?type=product&ref=515151', () => widget()],
    ['public FAQs, cached answer, second origin check', '/api/v1/public/faqs?type=product&ref=515151', () => widget()],
    ['public FAQs from a foreign origin', '/api/v1/public/faqs?type=product&ref=515151', () => widget({ Origin: 'https://elsewhere.test' })],
    ['public FAQs without a key', '/api/v1/public/faqs?type=product&ref=515151', () => ({ headers: { Origin: ORIGIN } })],
    // Cached per key and query as sent; a query over 1024 characters and an Origin over 300 are answered, not kept.
    ['public FAQs with the query spelled another way', '/api/v1/public/faqs?ref=515151&type=product', () => widget()],
    ['public FAQs with a query over 1024 characters', `/api/v1/public/faqs?type=product&ref=515151&pad=${'x'.repeat(1100)}`, () => widget()],
    ['public FAQs with a query over 1024 characters, again', `/api/v1/public/faqs?type=product&ref=515151&pad=${'x'.repeat(1100)}`, () => widget()],
    ['public FAQs from an allowed Origin over 300 characters', '/api/v1/public/faqs?type=product&ref=515151', () => widget({ Origin: `${ORIGIN}/${'x'.repeat(320)}` })],
    ['public FAQs from an allowed Origin over 300 characters, again', '/api/v1/public/faqs?type=product&ref=515151', () => widget({ Origin: `${ORIGIN}/${'x'.repeat(320)}` })],
    ['public FAQs with a bad type', '/api/v1/public/faqs?type=nope&ref=515151', () => widget()],
    ['public FAQs preflight', '/api/v1/public/faqs?type=product&ref=515151', () => ({ method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' } })],
    ['HEAD of public FAQs', '/api/v1/public/faqs?type=product&ref=515151', () => ({ ...widget(), method: 'HEAD' })],
    ['/embed.js', '/embed.js', () => ({})],
    ['/embed.js gzipped', '/embed.js', () => ({ headers: { 'Accept-Encoding': 'gzip' } })],
    ['HEAD of /embed.js', '/embed.js', () => ({ method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } })],
    ['the badge', BADGE, () => ({})],
    ['the badge as JSON', `${BADGE}&format=json`, () => ({})],
    ['the badge of an unscanned host', '/api/v1/public/probe/badge?domain=unseen.test', () => ({})],
    ['the badge without a domain', '/api/v1/public/probe/badge', () => ({})],
    ['the badge with a bad format', `${BADGE}&format=png`, () => ({})],
  ];
  for (const [name, route, init] of cases) {
    test(`${name}: the server's answer is the app's`, async () => {
      const { server, app } = await bothWays(typeof route === 'function' ? route() : route, init());
      expect(server).toEqual(app);
    });
  }

  test('a GET declaring a body larger than any route takes is refused with the same 413 both ways (before anything reads it)', async () => {
    const declared = bulkBodyLimit(t.config.maxBodyBytes) + 1;
    const { hostname, port } = new URL(server.url);
    let received = '';
    const done = Promise.withResolvers<void>();
    const socket = await Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        data: (_, chunk) => {
          received += chunk.toString('latin1');
          if (received.includes('}')) done.resolve();
        },
        close: () => done.resolve(),
        error: () => done.resolve(),
      },
    });
    socket.write(`GET ${product('md')} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Length: ${declared}\r\n\r\n`);
    await Promise.race([done.promise, Bun.sleep(5000)]);
    socket.terminate();
    const app = await t.request(product('md'), { headers: { 'content-length': String(declared) } });
    expect(app.status).toBe(413);
    expect(received).toStartWith('HTTP/1.1 413 ');
    expect(received.slice(received.indexOf('\r\n\r\n') + 4)).toBe(await app.text());
  });

  test('a doubled slash is another path: //embed.js is 404 not_found from the server, as from the app', async () => {
    const res = await asSent('//embed.js', {});
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not_found', detail: 'no route for GET //embed.js' });
  });

  test('conditional GETs: If-None-Match with the ETag gets the same 304 both ways', async () => {
    for (const route of [product('jsonld'), product('meta'), '/embed.js', BADGE]) {
      const etag = (await fetch(`${server.url}${route}`)).headers.get('etag')!;
      expect(etag).toBeTruthy();
      const { server: viaServer, app } = await bothWays(route, { headers: { 'If-None-Match': etag } });
      expect(viaServer.status).toBe(304);
      expect(viaServer).toEqual(app);
    }
    const etag = (await fetch(`${server.url}/api/v1/public/faqs?type=product&ref=515151`, widget())).headers.get('etag')!;
    const { server: viaServer, app } = await bothWays('/api/v1/public/faqs?type=product&ref=515151', widget({ 'If-None-Match': etag }));
    expect(viaServer.status).toBe(304);
    expect(viaServer).toEqual(app);
  });

  test('every answer is counted in /metrics under its route template and logged with its request id', async () => {
    const admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', data.dir])).json.key as string;
    const id = 'lane-request-1';
    expect((await fetch(`${server.url}${product('llm')}`, { headers: { 'X-Request-Id': id } })).headers.get('x-request-id')).toBe(id);
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
    expect(metrics).toMatch(/svc_http_requests_total\{route="\/api\/v1\/platform-a\/products\/:file",method="GET",status="2xx"\} \d+/);
    expect(metrics).toMatch(/svc_http_requests_total\{route="\/embed.js",method="GET",status="2xx"\} \d+/);
    expect(metrics).toMatch(/svc_http_requests_total\{route="\/api\/v1\/public\/faqs",method="GET",status="4xx"\} \d+/);
    expect(metrics).toMatch(/svc_http_requests_total\{route="\/api\/v1\/public\/probe\/badge",method="GET",status="2xx"\} \d+/);
    const line = server.stderr().split('\n').find((text) => text.includes(id));
    expect(JSON.parse(line!)).toMatchObject({ msg: 'request', method: 'GET', route: '/api/v1/platform-a/products/:file', status: 200, requestId: id });
  });

  test('a change made by another process is served on the next request, on PostgreSQL within 1 s (FAQ edit, key revocation)', async () => {
    const faqs = async () => {
      const response = await fetch(`${server.url}/api/v1/public/faqs?type=product&ref=515151`, widget());
      return { status: response.status, text: await response.text() };
    };
    const md = async () => (await fetch(`${server.url}${product('md')}`)).text();
    expect(await md()).toContain('Does it fit?');
    expect((await faqs()).status).toBe(200);
    // This test process is another process to the server: its app writes to the same database.
    expect((await patchFaq(t, faqId, { question: 'Does a 15-inch laptop fit?' })).status).toBe(200);
    const edited = 'Does a 15-inch laptop fit?';
    expect(await onceHeard(md, (text) => text.includes(edited))).toContain(edited);
    expect((await onceHeard(faqs, (answer) => answer.text.includes(edited))).text).toContain(edited);
    expect((await runCli(['keys', 'revoke', widgetKeyId, '--data-dir', data.dir])).code).toBe(0);
    const refused = await onceHeard(faqs, (answer) => answer.status !== 200);
    expect(refused.status).toBe(403);
    expect((JSON.parse(refused.text) as { error: string }).error).toBe('invalid_api_key');
  });
});
