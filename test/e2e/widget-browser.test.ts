import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { BROWSER_AVAILABLE, browserDescribe, launchChromium } from '../helpers/browser.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { PAGES, serveStorefront } from './fixtures/storefront.ts';

const suite = browserDescribe('browser tests');

// The widget as a shopper's browser runs it: real Chromium (Debian's), real svc, local storefronts.
// CI installs Chromium and always runs these; a developer machine without it skips them, saying so.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'e2e');

let tmp: ReturnType<typeof tempDir>;
let svc: SpawnedServer;
let storefront: ReturnType<typeof serveStorefront>;
let browser: Browser;
let admin: string;
let widgetKey: string;

const FAQS: [string, string, string, string][] = [
  ['product', 'trail-runner-2', 'Are they waterproof?', '<p>The upper is <strong>water-resistant</strong>, not waterproof.</p>'],
  ['product', 'trail-runner-2', 'How do they fit?', 'True to size. See <a href="https://example.com/sizes">the size guide</a>.'],
  ['product', '112', 'Is there a warranty?', 'Two years.'],
  ['product', '451', 'Can I return them?', 'Within 30 days.'],
  ['page', 'shipping', 'Do you ship abroad?', '<ul><li>EU: 3 days</li><li>World: 7 days</li></ul>'],
];

async function api(method: string, url: string, body?: unknown) {
  const res = await fetch(`${svc.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

beforeAll(async () => {
  if (!BROWSER_AVAILABLE) return;
  tmp = tempDir('svc-browser-');
  const dataDir = path.join(tmp.dir, 'data');
  admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir])).json.key;
  svc = await spawnServer({ dataDir });
  const store = await api('POST', '/api/v1/admin/stores', {
    platform: 'platform-a',
    domain: 'trail.myplatform-a.com',
    currency: 'EUR',
    credentials: { accessToken: 'permanent-token' },
  });
  for (const [entityType, entityRef, question, answer] of FAQS) {
    await api('POST', '/api/v1/admin/faqs', { storeId: store.id, entityType, entityRef, question, answer, status: 'approved' });
  }
  await api('POST', '/api/v1/admin/faqs', { storeId: store.id, entityType: 'product', entityRef: '451', question: 'Pending question?', answer: 'Not public yet.', status: 'pending' });
  widgetKey = (await api('POST', '/api/v1/admin/keys', { name: 'storefront', scopes: ['products:read'], allowedDomains: ['localhost'], storeId: store.id })).key;
  storefront = serveStorefront(svc.url, widgetKey);
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  storefront?.stop(true);
  await svc?.stop();
  tmp?.remove();
});

interface Visit {
  page: Page;
  logs: string[];
  pageErrors: string[];
}

async function visit(name: string, host = 'localhost'): Promise<Visit> {
  const page = await browser.newPage();
  const logs: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (m: ConsoleMessage) => logs.push(m.text()));
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`http://${host}:${storefront.port}${PAGES[name]!.path}`);
  return { page, logs, pageErrors };
}

/** The first console line containing `fragment`, waiting up to 5 s for it. */
async function waitForLog(v: Visit, fragment: string): Promise<string | undefined> {
  for (let i = 0; i < 100 && !v.logs.some((l) => l.includes(fragment)); i++) await Bun.sleep(50);
  return v.logs.find((l) => l.includes(fragment));
}

/** Every visit ends the same way: no error reached the page, a screenshot is saved, the tab closes. */
async function finish(v: Visit, name: string) {
  expect(v.pageErrors).toEqual([]);
  await v.page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  await v.page.close();
}

async function renderedEntries(page: Page) {
  return page.$$eval('.svc-faq details', (items) =>
    items.map((d) => ({ name: d.querySelector('summary')!.textContent, text: d.querySelector('.svc-faq__answer')!.innerHTML })),
  );
}

async function jsonLdEntries(page: Page) {
  const blocks = await page.$$eval('head script[type="application/ld+json"]', (s) => s.map((e) => e.textContent ?? ''));
  expect(blocks).toHaveLength(1);
  const schema = JSON.parse(blocks[0]!);
  expect(schema['@type']).toBe('FAQPage');
  return schema.mainEntity.map((q: { name: string; acceptedAnswer: { text: string } }) => ({ name: q.name, text: q.acceptedAnswer.text }));
}

async function expectKeyboardToggle(page: Page) {
  const summary = page.locator('.svc-faq summary').first();
  await summary.focus();
  expect(await page.locator('.svc-faq details').first().getAttribute('open')).toBeNull();
  await page.keyboard.press('Enter');
  expect(await page.locator('.svc-faq details').first().getAttribute('open')).toBe('');
  await page.keyboard.press('Space');
  expect(await page.locator('.svc-faq details').first().getAttribute('open')).toBeNull();
}

suite('embed.js in Chromium', () => {
  test('platform A: renders into data-target, toggles by keyboard, JSON-LD matches', async () => {
    const v = await visit('platform-a');
    const rendered = await waitForLog(v, 'rendered');
    expect(rendered).toBe('[Svc] embed.js: rendered 2 FAQ entries for product/trail-runner-2 (detected via url-path)');
    expect(v.logs).toContain('[Svc] embed.js: fetching FAQ for product/trail-runner-2 (detected via url-path)');
    expect(await v.page.locator('#product-faq.svc-faq').count()).toBe(1);
    const entries = await renderedEntries(v.page);
    expect(entries.map((e) => e.name)).toEqual(['Are they waterproof?', 'How do they fit?']);
    expect(await jsonLdEntries(v.page)).toEqual(entries);
    await expectKeyboardToggle(v.page);
    expect(await v.page.$eval('#product-faq', (e) => getComputedStyle(e).getPropertyValue('--svc-faq-accent').trim())).toBe('#b3125a');
    // Without a theme the storefront's own styles apply: no background, no padding of svc's.
    expect(await v.page.$eval('#product-faq', (e) => e.hasAttribute('data-theme') ? 'themed' : getComputedStyle(e).paddingLeft)).toBe('0px');
    await finish(v, 'platform-a');
  });

  test('platform B: the page-data global set late is found (bc-window)', async () => {
    const v = await visit('platform-b');
    const rendered = await waitForLog(v, 'rendered');
    expect(rendered).toBe('[Svc] embed.js: rendered 1 FAQ entry for product/112 (detected via bc-window)');
    expect(await v.page.locator('[data-svc-faq].svc-faq[data-theme="dark"]').count()).toBe(1);
    // A theme paints its own background: the text keeps clear of its edges (light as dark).
    const inset = () => v.page.$eval('[data-svc-faq].svc-faq', (e) => [getComputedStyle(e).paddingLeft, getComputedStyle(e).paddingRight].map(parseFloat));
    expect(Math.min(...(await inset()))).toBeGreaterThanOrEqual(12);
    await v.page.$eval('[data-svc-faq].svc-faq', (e) => e.setAttribute('data-theme', 'light'));
    expect(Math.min(...(await inset()))).toBeGreaterThanOrEqual(12);
    expect(await jsonLdEntries(v.page)).toEqual(await renderedEntries(v.page));
    await expectKeyboardToggle(v.page);
    await finish(v, 'platform-b');
  });

  test('platform C: body classes give the product id; pending FAQs never appear', async () => {
    const v = await visit('platform-c');
    const rendered = await waitForLog(v, 'rendered');
    expect(rendered).toBe('[Svc] embed.js: rendered 1 FAQ entry for product/451 (detected via body-class)');
    const entries = await renderedEntries(v.page);
    expect(entries).toEqual([{ name: 'Can I return them?', text: 'Within 30 days.' }]);
    // Rendered right after the script tag, below the page content.
    expect(await v.page.$eval('.svc-faq', (e) => e.previousElementSibling?.tagName)).toBe('SCRIPT');
    expect(await jsonLdEntries(v.page)).toEqual(entries);
    await finish(v, 'platform-c');
  });

  test('strict CSP with a nonce: the widget and its style run; no CSP violation', async () => {
    const v = await visit('strict-csp');
    const rendered = await waitForLog(v, 'rendered');
    expect(rendered).toBe('[Svc] embed.js: rendered 1 FAQ entry for page/shipping (detected via url-path)');
    expect(await v.page.$eval('#svc-faq-style', (e) => (e as HTMLStyleElement).sheet !== null)).toBe(true);
    // The style applied: the question is bold (font-weight 600 from the widget's stylesheet).
    expect(await v.page.$eval('.svc-faq summary', (e) => getComputedStyle(e).fontWeight)).toBe('600');
    expect(v.logs.filter((l) => l.includes('Content Security Policy'))).toEqual([]);
    expect(await jsonLdEntries(v.page)).toEqual(await renderedEntries(v.page));
    await finish(v, 'strict-csp');
  });

  test('a page origin not in allowedDomains: refused, nothing rendered, the page keeps working', async () => {
    const v = await visit('platform-a', '127.0.0.1');
    // The server refuses the origin (403, and no CORS grant), so the browser reports a network error.
    const refused = await waitForLog(v, '[Svc] embed.js: FAQ request');
    expect(refused).toBe(
      "[Svc] embed.js: FAQ request for product/trail-runner-2 failed (Failed to fetch): a network error, or this site's domain is not in the key's allowedDomains",
    );
    const direct = await fetch(`${svc.url}/api/v1/public/faqs?type=product&ref=trail-runner-2`, {
      headers: { 'x-api-key': widgetKey, origin: `http://127.0.0.1:${storefront.port}` },
    });
    expect(direct.status).toBe(403);
    expect(direct.headers.get('access-control-allow-origin')).toBeNull();
    expect(await v.page.locator('.svc-faq').count()).toBe(0);
    expect(await v.page.locator('script[type="application/ld+json"]').count()).toBe(0);
    expect(await v.page.locator('#after').textContent()).toBe('footer');
    await finish(v, 'forbidden-origin');
  });
});
