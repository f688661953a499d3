import { afterEach, describe, expect, test } from 'bun:test';
import { loadConfig } from '../src/config.ts';
import { ownOriginsOf } from '../src/lib/same-origin.ts';
import { jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { addFaq, seedStore } from './helpers/signals.ts';

// svc's own origin (for the console's CSRF check and the widget preview's pass through the FAQ
// domain check) comes from the configuration only. Under DNS rebinding a hostile name resolves to
// svc: the browser then sends `Host: evil.test`, `Origin: http://evil.test` and
// `Sec-Fetch-Site: same-origin`, all of which a hostile page controls. These requests go over real
// HTTP, where the request's URL is built from the Host header as sent.

let t: TestApp;
afterEach(() => t?.close());

const send = (path: string, init: RequestInit = {}) => fetch(`${t.url}${path}`, init);
const REBOUND = { Host: 'evil.test', Origin: 'http://evil.test' };

async function widgetSetup() {
  const storeId = await seedStore(t, 'platform-a', 'acme.myplatform-a.com');
  await addFaq(t, { storeId, entityType: 'product', entityRef: 'tote', question: 'Is it waterproof?', answer: 'Yes.', status: 'approved' });
  return (await t.keys.create({ scopes: ['products:read'], allowedDomains: ['www.acme-shop.test'], storeId })).key;
}

async function adminCookie(): Promise<string> {
  const res = await send('/api/v1/console/session', jsonRequest('POST', { key: await t.keyWith('admin') }, { Origin: t.config.baseUrl }));
  expect(res.status).toBe(201);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

describe('svc’s own origin comes from --base-url only, never from the Host header', () => {
  test('public FAQs: Host: evil.test with Origin: http://evil.test is refused despite allowedDomains, with no CORS grant', async () => {
    t = await makeTestApp({ listen: true });
    const widgetKey = await widgetSetup();
    const res = await send('/api/v1/public/faqs?type=product&ref=tote', { headers: { 'X-Api-Key': widgetKey, ...REBOUND } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'origin_not_allowed' });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    // The same name as Referer, with the browser's "same-origin" beside it.
    const byReferer = await send('/api/v1/public/faqs?type=product&ref=tote', { headers: { 'X-Api-Key': widgetKey, Host: 'evil.test', Referer: 'http://evil.test/p', 'Sec-Fetch-Site': 'same-origin' } });
    expect(byReferer.status).toBe(403);
    // svc's own page (the console's preview, by its base URL) still passes, and the storefront too.
    expect((await send('/api/v1/public/faqs?type=product&ref=tote', { headers: { 'X-Api-Key': widgetKey, Referer: `${t.config.baseUrl}/console/widget-preview` } })).status).toBe(200);
    const shop = await send('/api/v1/public/faqs?type=product&ref=tote', { headers: { 'X-Api-Key': widgetKey, Origin: 'https://www.acme-shop.test' } });
    expect(shop.status).toBe(200);
    expect(shop.headers.get('access-control-allow-origin')).toBe('https://www.acme-shop.test');
  });

  test('public FAQs: Sec-Fetch-Site: same-origin never has an arbitrary Origin echoed in Access-Control-Allow-Origin', async () => {
    t = await makeTestApp({ listen: true });
    const widgetKey = await widgetSetup();
    for (const origin of ['http://evil.test', 'https://attacker.example', 'null']) {
      const res = await send('/api/v1/public/faqs?type=product&ref=tote', { headers: { 'X-Api-Key': widgetKey, Origin: origin, 'Sec-Fetch-Site': 'same-origin' } });
      expect(res.status, origin).toBe(403);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });

  test('console: sign-in, a session’s writes and the widget preview refuse Host: evil.test with Origin: http://evil.test', async () => {
    t = await makeTestApp({ listen: true });
    const signIn = await send('/api/v1/console/session', jsonRequest('POST', { key: await t.keyWith('admin') }, REBOUND));
    expect(signIn.status).toBe(403);
    expect(await signIn.json()).toMatchObject({ error: 'cross_origin_refused' });
    expect(signIn.headers.get('set-cookie')).toBeNull();
    const cookie = await adminCookie();
    const write = await send('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['admin'] }, { ...REBOUND, cookie }));
    expect(write.status).toBe(403);
    expect(await write.json()).toMatchObject({ error: 'cross_origin_refused' });
    const preview = await send('/console/widget-preview', { method: 'POST', body: 'key=k', headers: { 'content-type': 'application/x-www-form-urlencoded', ...REBOUND, cookie } });
    expect(preview.status).toBe(403);
    // Only the two admin keys this test made exist: the refused write made none.
    expect(await t.keys.list()).toHaveLength(2);
    // At its base URL the console still signs in and writes.
    expect((await send('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['probe:scan'] }, { Origin: t.config.baseUrl, cookie }))).status).toBe(201);
  });

  test('the loopback names of the listen address count only while the base URL is the default one', async () => {
    // The test app listens (in its configuration) on 127.0.0.1:3000 with no base URL set.
    t = await makeTestApp();
    const signIn = async (origin: string) => t.request('/api/v1/console/session', jsonRequest('POST', { key: await t.keyWith('admin') }, { origin }));
    expect((await signIn('http://127.0.0.1:3000')).status).toBe(201);
    expect((await signIn('http://localhost:3000')).status).toBe(201);
    // Not another port, nor the Host the request was sent to (http://localhost under app.handle).
    for (const origin of ['http://localhost:3001', 'http://localhost', 'http://[::1]:3000', 'https://localhost:3000']) expect((await signIn(origin)).status, origin).toBe(403);
    await t.close();
    t = await makeTestApp({ env: { SVC_BASE_URL: 'http://127.0.0.1:3000' } });
    expect((await signIn('http://127.0.0.1:3000')).status).toBe(201);
    expect((await signIn('http://localhost:3000')).status).toBe(403);
  });
});

describe('ownOriginsOf: svc’s own origins from its configuration', () => {
  const cases: [string, Record<string, string>, string[]][] = [
    ['the default listen address and base URL', {}, ['http://127.0.0.1:3000', 'http://localhost:3000']],
    ['IPv6 loopback', { SVC_HTTP: '[::1]:8080' }, ['http://[::1]:8080', 'http://localhost:8080']],
    ['localhost', { SVC_HTTP: 'localhost:3000' }, ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']],
    ['another loopback address (localhost does not reach it)', { SVC_HTTP: '127.0.0.2:3000' }, ['http://127.0.0.2:3000']],
    ['all interfaces (not loopback: set SVC_BASE_URL)', { SVC_HTTP: '0.0.0.0:3000' }, ['http://0.0.0.0:3000']],
    ['an explicit base URL', { SVC_BASE_URL: 'https://svc.example.com' }, ['https://svc.example.com']],
    ['an explicit base URL naming the listen address', { SVC_BASE_URL: 'http://127.0.0.1:3000' }, ['http://127.0.0.1:3000']],
  ];
  test.each(cases)('%s', (_, env, expected) => {
    expect(ownOriginsOf(loadConfig({}, env))).toEqual(expected);
  });
});
