import { afterEach, describe, expect, test } from 'bun:test';
import { exampleScan } from '../src/landing/render.ts';
import { decodeEntities } from '../src/lib/html.ts';
import { jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, tokenInit } from './helpers/probe.ts';

// The landing page (GET / and its no-JavaScript sign-up form) and the console's page shell, through
// the app's HTTP surface. Browser behaviour is covered by test/e2e/console-browser.test.ts.
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  body: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

/** The assets a page loads (script src and stylesheet href under /assets/). */
const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);

/** What a browser transfers for a page: its HTML and every asset, gzip-compressed as served. */
async function transferredBytes(path: string): Promise<{ total: number; js: number }> {
  const page = await t.request(path);
  const html = await page.text();
  let total = Bun.gzipSync(html).byteLength;
  let js = 0;
  for (const asset of assetsOf(html)) {
    const res = await t.request(asset, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const bytes = (await res.arrayBuffer()).byteLength;
    total += bytes;
    if (asset.endsWith('.js')) js += bytes;
  }
  return { total, js };
}

/** No inline script, no inline style, no event-handler attribute: what a strict CSP would refuse anyway. */
function expectNothingInline(html: string) {
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  expect(html).not.toMatch(/<style/);
  expect(html).not.toMatch(/\sstyle=/);
  expect(html).not.toMatch(/\son[a-z]+=/);
}

function expectStrictCsp(res: Response) {
  const csp = res.headers.get('content-security-policy')!;
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
}

describe('landing page', () => {
  test('GET / is an HTML page with the instance name, contact line and a labelled sign-up form, under a strict CSP', async () => {
    t = await makeTestApp({ env: { SVC_SITE_NAME: 'Probe <Hub>', SVC_SITE_CONTACT: 'Questions: ops@example.com' } });
    const res = await t.request('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectStrictCsp(res);
    const html = await res.text();
    expect(html).toContain('<title>Probe &#60;Hub&#62;: page-scan telemetry</title>');
    expect(html).toContain('Questions: ops@example.com');
    expect(html).toMatch(/<form[^>]*method="post" action="\/"/);
    expect(html).toContain('<label for="email">');
    expect(html).toMatch(/<input id="email" name="email" type="email"/);
    expectNothingInline(html);
  });

  test('without SVC_SITE_CONTACT the footer names no contact, and says nothing about the instance that it cannot know', async () => {
    t = await makeTestApp();
    const html = await (await t.request('/')).text();
    const footer = html.slice(html.indexOf('<footer'), html.indexOf('</footer>'));
    expect(footer).not.toContain('self-hosted');
    expect(footer).toContain('Powered by svc');
    expect(footer.match(/<span>/g)).toHaveLength(1);
  });

  test('the landing page transfers at most 15 KB in total (HTML, CSS and script, gzip)', async () => {
    t = await makeTestApp();
    const { total } = await transferredBytes('/');
    expect(total).toBeLessThanOrEqual(15 * 1024);
  });

  test('the form sign-up (no JavaScript) answers 201 with the token once; the token sends a scan', async () => {
    t = await makeTestApp();
    const res = await t.request('/', form({ email: 'Author@Example.com' }));
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectStrictCsp(res);
    const html = await res.text();
    const token = /<code class="token" id="token">([^<]+)<\/code>/.exec(html)?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(html).toContain('author@example.com');
    // The ready-to-run example names this server and the token.
    expect(decodeEntities(/<code id="example">([^<]+)<\/code>/.exec(html)![1]!)).toBe(exampleScan(t.config.baseUrl, token!));
    expectNothingInline(html);
    const scan = await t.request(TELEMETRY, tokenInit(token!, { hostname: 'shop.example.com', signals: {} }));
    expect(scan.status).toBe(204);
  });

  test('a bad email comes back with the error next to the field, the input kept and escaped (400)', async () => {
    t = await makeTestApp();
    const res = await t.request('/', form({ email: '"><script>alert(1)</script>' }));
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<p class="field-error" id="email-error">Enter a valid email address, such as name@example.com.</p>');
    expect(html).toContain('aria-invalid="true"');
    expect(html).toContain('aria-describedby="email-error email-hint"');
    expect(html).toContain('value="&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;"');
    expectNothingInline(html);
  });

  test('a known email gets the same page as a new one, with a working token (the form does not reveal who signed up), and its lead keeps its token', async () => {
    t = await makeTestApp();
    const first = await t.request('/', form({ email: 'a@example.com' }));
    expect(first.status).toBe(201);
    const firstToken = /<code class="token" id="token">([^<]+)<\/code>/.exec(await first.text())![1]!;
    const again = await t.request('/', form({ email: 'A@example.com' }));
    expect(again.status).toBe(201);
    const page = await again.text();
    const token = /<code class="token" id="token">([^<]+)<\/code>/.exec(page)![1]!;
    expect(token).toHaveLength(firstToken.length);
    expect(page).toContain('Every sign-up gets a token of its own; a token from an earlier sign-up keeps working.');
    const firstLead = await t.leads.findByToken(firstToken);
    expect(firstLead).toMatchObject({ email: 'a@example.com', repeatOf: null });
    expect(await t.leads.findByToken(token)).toMatchObject({ email: 'a@example.com', verified: false, repeatOf: firstLead!.id });
  });

  test('a body that is not the form is 415', async () => {
    t = await makeTestApp();
    const res = await t.request('/', jsonRequest('POST', { email: 'a@example.com' }));
    expect(res.status).toBe(415);
    expect(await res.text()).toContain('Send the form from this page.');
  });

  test('the form and the API draw from one sign-up bucket per client: 429 with Retry-After, shown next to the field', async () => {
    t = await makeTestApp({ env: { SVC_RATE_ANONYMOUS: '2' } });
    expect((await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'api@example.com' }))).status).toBe(201);
    expect((await t.request('/', form({ email: 'form@example.com' }))).status).toBe(201);
    const limited = await t.request('/', form({ email: 'third@example.com' }));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-policy')).toBe('"anonymous";q=2;w=60');
    expect(await limited.text()).toMatch(/<p class="field-error" id="email-error">Too many sign-ups from your network. Try again in \d+ seconds.<\/p>/);
    expect((await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'api2@example.com' }))).status).toBe(429);
    expect(await t.query('SELECT count(*) AS n FROM leads')).toEqual([{ n: 2 }]);
  });

  test('assets are served with a long cache life and a validator', async () => {
    t = await makeTestApp();
    const [css] = assetsOf(await (await t.request('/')).text()).filter((a) => a.endsWith('.css'));
    const res = await t.request(css!);
    expect(res.headers.get('content-type')).toStartWith('text/css');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await t.request(css!, { headers: { 'if-none-match': res.headers.get('etag')! } })).status).toBe(304);
    expect((await t.request('/assets/nope.js')).status).toBe(404);
  });
});

describe('console page shell', () => {
  test('/console and its client routes serve the shell under a strict CSP that allows framing only its own preview', async () => {
    t = await makeTestApp({ env: { SVC_SITE_NAME: 'Probe Hub' } });
    for (const path of ['/console', '/console/scans', '/console/stores/abc']) {
      const res = await t.request(path);
      expect(res.status).toBe(200);
      expectStrictCsp(res);
      expect(res.headers.get('content-security-policy')).toContain("frame-src 'self'");
      const html = await res.text();
      expect(html).toContain('<title>Probe Hub console</title>');
      expectNothingInline(html);
    }
  });

  test('the console script is at most 60 KB minified and gzipped', async () => {
    t = await makeTestApp();
    const { js } = await transferredBytes('/console');
    expect(js).toBeGreaterThan(0);
    expect(js).toBeLessThanOrEqual(60 * 1024);
  });
});

describe('the widget preview and svc’s own pages', () => {
  async function adminSession(): Promise<string> {
    const res = await t.request('/api/v1/console/session', jsonRequest('POST', { key: await t.keyWith('admin') }, { origin: t.config.baseUrl }));
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }
  const previewForm = (fields: Record<string, string>, headers: Record<string, string>): RequestInit => ({
    method: 'POST',
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });

  test('POST /console/widget-preview needs a same-origin admin session and renders escaped attributes under a nonce CSP', async () => {
    t = await makeTestApp();
    const fields = { key: 'sk_live_x"><script>alert(1)</script>', target: '#faq', entityType: 'product', entityId: 'tote', 'style-accent': '#b3125a' };
    expect((await t.request('/console/widget-preview', previewForm(fields, { origin: t.config.baseUrl }))).status).toBe(401);
    const cookie = await adminSession();
    expect((await t.request('/console/widget-preview', previewForm(fields, { origin: 'http://evil.test', cookie }))).status).toBe(403);
    const res = await t.request('/console/widget-preview', previewForm(fields, { origin: t.config.baseUrl, cookie }));
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).toContain("frame-ancestors 'self'");
    const html = await res.text();
    expect(html).toContain(`<script nonce="${nonce}" src="/embed.js" async data-api-key="sk_live_x&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;" data-target="#faq" data-entity-type="product" data-entity-id="tote" data-style-accent="#b3125a"></script>`);
    expect(html).toContain('<div id="faq"></div>');
  });

  test('the dashboard-only session may not open the widget preview', async () => {
    t = await makeTestApp();
    const res = await t.request('/api/v1/console/session', jsonRequest('POST', { key: await t.keyWith('dashboard:read') }, { origin: t.config.baseUrl }));
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const preview = await t.request('/console/widget-preview', previewForm({ key: 'k' }, { origin: t.config.baseUrl, cookie }));
    expect(preview.status).toBe(403);
  });

  test('every page of svc names an inline icon, so a browser never asks for /favicon.ico (a 404 in the log on each visit)', async () => {
    t = await makeTestApp();
    const cookie = await adminSession();
    const pages: [string, RequestInit][] = [
      ['/', {}],
      ['/console', {}],
      ['/docs/api', {}],
      ['/console/widget-preview', previewForm({ key: 'sk_live_x' }, { origin: t.config.baseUrl, cookie })],
    ];
    for (const [path, init] of pages) {
      const res = await t.request(path, init);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain('<link rel="icon" href="data:,">');
      // The icon is a data: URL, which each page's policy admits as an image.
      expect(res.headers.get('content-security-policy'), path).toMatch(/img-src [^;]*data:/);
    }
    expect((await t.request('/favicon.ico')).status).toBe(404);
  });

  test('the public FAQ endpoint lets svc’s own pages through the domain check, and only them', async () => {
    t = await makeTestApp();
    const store = await t.request(
      '/api/v1/admin/stores',
      jsonRequest('POST', { platform: 'platform-a', domain: 'shop.myplatform-a.com', currency: 'EUR', credentials: { accessToken: 'token' } }, { authorization: `Bearer ${await t.keyWith('admin')}` }),
    );
    const storeId = (await store.json()).id;
    const widget = (await t.keys.create({ scopes: ['products:read'], allowedDomains: ['shop.example.com'], storeId })).key;
    const ask = (headers: Record<string, string>) => t.request('/api/v1/public/faqs?type=product&ref=tote', { headers: { 'x-api-key': widget, ...headers } });
    expect((await ask({ referer: `${t.config.baseUrl}/console/widget-preview` })).status).toBe(200);
    // The default base URL's loopback alias (svc listens on 127.0.0.1:3000) is svc too.
    expect((await ask({ referer: 'http://localhost:3000/console/widget-preview' })).status).toBe(200);
    // The browser's word is not enough: a rebound name is "same-origin" with itself.
    expect((await ask({ 'sec-fetch-site': 'same-origin', referer: 'http://localhost/x' })).status).toBe(403);
    expect((await ask({ referer: 'http://localhost:8080/page' })).status).toBe(403);
    expect((await ask({ origin: 'http://evil.test' })).status).toBe(403);
    expect((await ask({ origin: 'https://shop.example.com' })).status).toBe(200);
  });
});
