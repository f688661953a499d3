import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { platformACollection, platformAPage, platformAProduct } from '../fakes/payloads.ts';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { tempDir } from '../helpers/app.ts';
import { BROWSER_AVAILABLE, browserDescribe, consoleSignIn, finishVisit, hoverPlotEnd, launchChromium, untilFocused, openVisit, screenshot, type Visit } from '../helpers/browser.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { signedInit, TELEMETRY, tokenInit } from '../helpers/probe.ts';
import { callAs, spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { serveStorefront } from './fixtures/storefront.ts';

const suite = browserDescribe('console browser tests');

// The landing page and the console as a newcomer uses them: real Chromium, a spawned svc (or the
// compiled binary with SVC_E2E_BINARY=dist/svc), a fake platform A, a local storefront. Every visit
// fails on a page error or a CSP violation and leaves a screenshot in test-output/console/.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'console');
const SHOP = { domain: 'trail.myplatform-a.com', accessToken: 'shpat-console-e2e', clientSecret: 'client-secret-e2e', currency: 'EUR' };
const DAY = 86_400_000;
/** Chromium on a shared 2-core machine: each flow gets a minute. */
const FLOW_MS = 60_000;

let tmp: ReturnType<typeof tempDir>;
let svc: SpawnedServer;
let fake: FakePlatformA;
let browser: Browser;
let admin: string;
let dashboardKey: string;
let signUpToken = '';
let storeId = '';
let widgetKey = '';

const api = (method: string, route: string, body?: unknown) => callAs(svc.url, admin, method, route, body);

/** Scans over the last three weeks, across grades, platforms, page types and countries, so every chart has bars. */
async function seedScans(): Promise<void> {
  const key = (await runCli(['keys', 'create', '--scopes', 'probe:scan', '--data-dir', path.join(tmp.dir, 'data')])).json.key;
  const grades = [['A', 94], ['B', 81], ['C', 66], ['D', 52], ['F', 23]] as const;
  const platforms = ['platform-a', 'platform-b', 'platform-c', 'custom'];
  const pageTypes = ['product', 'home', 'collection', 'page'];
  const countries = ['DE', 'FR', 'US', 'GB', 'NL'];
  const scans = Array.from({ length: 60 }, (_, i) => {
    const [grade, percentage] = grades[(i * 7) % grades.length]!;
    return {
      url: `https://store-${i % 6}.example.org/p/${i}`,
      hostname: `store-${i % 6}.example.org`,
      scannedAt: new Date(Date.now() - ((i * 8) % 20) * DAY - (i % 5) * 3_600_000).toISOString(),
      platform: { platform: platforms[i % platforms.length], confidence: 0.8 },
      pageType: pageTypes[i % pageTypes.length],
      country: countries[i % countries.length],
      signals: { title: { value: `Page ${i}`, length: 6 } },
      signalPresence: { title: true, description: i % 2 === 0, jsonLd: i % 3 === 0 },
      quality: { grade, percentage },
    };
  });
  const body = JSON.stringify({ scans });
  const res = await fetch(`${svc.url}/api/v1/probe/scan-bulk`, signedInit(key, body, Date.now()));
  expect(res.status).toBe(200);
  expect((await res.json()).inserted).toBe(60);
}

beforeAll(async () => {
  if (!BROWSER_AVAILABLE) return;
  tmp = tempDir('svc-console-');
  const dataDir = path.join(tmp.dir, 'data');
  fake = startFakePlatformA([SHOP]);
  admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--name', 'ops', '--data-dir', dataDir])).json.key;
  dashboardKey = (await runCli(['keys', 'create', '--scopes', 'dashboard:read', '--name', 'analyst', '--data-dir', dataDir])).json.key;
  const binary = process.env.SVC_E2E_BINARY;
  svc = await spawnServer({
    dataDir,
    // Every flow signs in afresh from the same address: more console sign-ins than the anonymous
    // tier's 10 per minute when the suite runs fast (the sign-in limit itself is tested over HTTP).
    env: { SVC_PLATFORM_A_API_BASE: fake.url, SVC_SITE_NAME: 'Probe Hub', SVC_SITE_CONTACT: 'Run by the example.org web team: ops@example.org', SVC_RATE_ANONYMOUS: '1000' },
    ...(binary ? { command: [path.resolve(REPO_ROOT, binary)], cwd: tmp.dir } : {}),
  });
  await seedScans();
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  fake?.stop();
  tmp?.remove();
});

const open = (path_: string, options: BrowserContextOptions = {}): Promise<Visit> => openVisit(browser, svc.url + path_, options);
const shot = (v: Visit, name: string) => screenshot(v, SCREENSHOTS, name);
const finish = finishVisit;
const signIn = consoleSignIn;

/** Non-blank pixels of a chart's canvas. */
const inkOf = (page: Page, index: number) =>
  page.locator('.chart canvas').nth(index).evaluate((canvas: HTMLCanvasElement) => {
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) ink++;
    return ink;
  });

suite('landing page in Chromium', () => {
  test('with JavaScript disabled, the form POST answers with a server-rendered page showing the token once', async () => {
    const v = await open('/', { javaScriptEnabled: false });
    await expect(v.page.title()).resolves.toBe('Probe Hub: page-scan telemetry');
    expect(await v.page.getByText('Run by the example.org web team').count()).toBe(1);
    await shot(v, 'landing');
    await v.page.getByLabel('Email address').fill('not-an-email');
    await v.page.getByRole('button', { name: 'Get my API token' }).click();
    await v.page.waitForLoadState();
    expect(await v.page.locator('#email-error').textContent()).toBe('Enter a valid email address, such as name@example.com.');
    expect(await v.page.getByLabel('Email address').getAttribute('aria-invalid')).toBe('true');
    await shot(v, 'landing-error');
    await v.page.getByLabel('Email address').fill('scanner-author@example.org');
    await v.page.getByRole('button', { name: 'Get my API token' }).click();
    await v.page.getByRole('heading', { name: 'Your API token' }).waitFor();
    signUpToken = (await v.page.locator('#token').textContent())!.trim();
    expect(signUpToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await v.page.locator('#example').textContent()).toContain(`X-Probe-Token: ${signUpToken}`);
    // Without JavaScript the copy buttons stay hidden; the token is plain selectable text.
    expect(await v.page.getByRole('button', { name: 'Copy' }).count()).toBe(0);
    await shot(v, 'landing-token-no-js');
    await finish(v);
  }, FLOW_MS);

  test('with JavaScript, the result page offers copy buttons; the page fits 360 px', async () => {
    const v = await open('/', { viewport: { width: 360, height: 740 } });
    expect(await v.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await shot(v, 'landing-360');
    await v.page.getByLabel('Email address').fill('second-author@example.org');
    await v.page.getByRole('button', { name: 'Get my API token' }).click();
    await v.page.getByRole('button', { name: 'Copy', exact: true }).waitFor();
    expect(await v.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await shot(v, 'landing-token-360');
    await finish(v);
  }, FLOW_MS);

  test('the token from the landing page sends a scan (mode 1)', async () => {
    const res = await fetch(svc.url + TELEMETRY, tokenInit(signUpToken, { url: 'https://shop.example.com/products/blue-mug', hostname: 'shop.example.com', pageType: 'product', signals: { title: { value: 'Blue mug', length: 8 } }, quality: { grade: 'C', percentage: 64 } }));
    expect(res.status).toBe(204);
  }, FLOW_MS);
});

suite('console in Chromium', () => {
  test('sign-in with an admin key: HttpOnly SameSite=Strict cookie, every admin page in the navigation', async () => {
    const v = await open('/console');
    await v.page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await shot(v, 'console-sign-in');
    await signIn(v, admin);
    const cookies = await v.context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.secure])).toEqual([['svc_session', true, 'Strict', false]]);
    expect(await v.page.evaluate(() => document.cookie)).toBe('');
    expect(await v.page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).toBe('{}{}');
    const nav = await v.page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents();
    expect(nav).toEqual(['Overview', 'Scans', 'Keys', 'Leads', 'Stores', 'Catalogue', 'FAQs', 'Widget']);
    await finish(v);
  }, FLOW_MS);

  test('sign-in at the base URL’s loopback alias (http://localhost:PORT), since no base URL is set and svc listens on 127.0.0.1', async () => {
    const alias = svc.baseUrl.replace('//127.0.0.1:', '//localhost:');
    expect(alias).not.toBe(svc.baseUrl);
    const v = await openVisit(browser, `${alias}/console/keys`);
    const page = v.page;
    await signIn(v, admin);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // A write from the alias passes the same-origin check too.
    await page.getByLabel('Name').fill('made-at-localhost');
    await page.getByRole('checkbox', { name: /probe:scan/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('New key “made-at-localhost”').waitFor();
    await finish(v);
  }, FLOW_MS);

  test('Overview: charts draw with axes, legends and tooltips, and refresh without reloading', async () => {
    const v = await open('/console');
    await signIn(v, admin);
    await v.page.getByRole('heading', { name: 'Overview' }).waitFor();
    await v.page.locator('.chart canvas').nth(4).waitFor();
    for (let i = 0; i < 5; i++) expect(await inkOf(v.page, i)).toBeGreaterThan(500);
    const legend = await v.page.locator('.chart').first().locator('.u-legend').textContent();
    expect(legend).toContain('Scans');
    expect(legend).toContain('Average score (%)');
    expect(await v.page.locator('.chart').nth(1).locator('.u-legend').textContent()).toContain('Scans');
    const tip = await hoverPlotEnd(v.page, v.page.locator('.chart').first(), 20);
    expect(await tip.textContent()).toMatch(/^\d{4}-\d{2}-\d{2}Scans: \d+Average score \(%\): /);
    const totals = async () => Number((await v.page.locator('.total-value').first().textContent())!.replace(/\D/g, ''));
    expect(await totals()).toBe(61);
    await v.page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    expect((await fetch(svc.url + TELEMETRY, tokenInit(signUpToken, { hostname: 'shop.example.com', signals: {} }))).status).toBe(204);
    await v.page.getByRole('button', { name: 'Refresh' }).click();
    await v.page.waitForFunction(() => document.querySelector('.total-value')?.textContent?.replace(/\D/g, '') === '62');
    expect(await v.page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42);
    await v.page.mouse.move(0, 0);
    await shot(v, 'overview');
    await v.page.getByLabel('Scans per', { exact: true }).selectOption('month');
    await v.page.waitForFunction(() => document.querySelector('.chart figcaption')?.textContent === 'Scans per month');
    expect(await inkOf(v.page, 0)).toBeGreaterThan(500);
    await finish(v);
  }, FLOW_MS);

  test('Overview in dark mode and at 360 px', async () => {
    const v = await open('/console', { colorScheme: 'dark', viewport: { width: 360, height: 800 } });
    await signIn(v, admin);
    await v.page.locator('.chart canvas').nth(4).waitFor();
    expect(await v.page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(15, 20, 26)');
    expect(await v.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await v.page.waitForTimeout(200);
    await shot(v, 'overview-dark-360');
    await finish(v);
  }, FLOW_MS);

  test('Scans: the landing token’s scan is listed; filters, keyset paging and the detail view', async () => {
    const v = await open('/console/scans');
    await signIn(v, admin);
    await v.page.getByRole('heading', { name: 'Scans' }).waitFor();
    await v.page.locator('tbody tr').first().waitFor();
    expect(await v.page.locator('tbody tr').count()).toBe(25);
    const first = await v.page.locator('tbody tr').first().textContent();
    await v.page.getByRole('button', { name: 'Next →' }).click();
    await v.page.getByText('Page 2 · 25 shown').waitFor();
    await v.page.waitForFunction((text) => document.querySelector('tbody tr')?.textContent !== text, first);
    await v.page.getByRole('button', { name: 'Next →' }).click();
    await v.page.getByText('Page 3 · 12 shown').waitFor();
    expect(await v.page.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
    await v.page.getByRole('button', { name: '← Previous' }).click();
    await v.page.getByText('Page 2 · 25 shown').waitFor();
    await shot(v, 'scans');

    await v.page.getByLabel('Hostname').fill('shop.example.com');
    await v.page.getByRole('button', { name: 'Apply filters' }).click();
    await v.page.getByText('Page 1 · 2 shown').waitFor();
    expect(v.page.url()).toContain('hostname=shop.example.com');
    await v.page.getByLabel('Grade').selectOption('C');
    await v.page.getByLabel('Page type').selectOption('product');
    await v.page.getByLabel('Platform').selectOption('');
    await v.page.getByLabel('Country').selectOption('');
    await v.page.getByRole('button', { name: 'Apply filters' }).click();
    await v.page.getByText('Page 1 · 1 shown').waitFor();
    await v.page.locator('tbody tr a').first().click();
    await v.page.getByRole('heading', { name: 'shop.example.com' }).waitFor();
    expect(await v.page.locator('.facts').first().textContent()).toContain('https://shop.example.com/products/blue-mug');
    expect(await v.page.locator('pre').nth(1).textContent()).toContain('"Blue mug"');
    await shot(v, 'scan-detail');
    for (const [label, value, rows] of [['Country', 'DE', 12], ['Platform', 'platform-b', 15]] as const) {
      await v.page.goto(`${svc.url}/console/scans`);
      await v.page.getByLabel(label).first().waitFor();
      await v.page.getByLabel(label).locator(`option[value="${value}"]`).waitFor({ state: 'attached' });
      await v.page.getByLabel(label).selectOption(value);
      await v.page.getByRole('button', { name: 'Apply filters' }).click();
      await v.page.getByText(`Page 1 · ${rows} shown`).waitFor();
    }
    await v.page.goto(`${svc.url}/console/scans?from=${new Date(Date.now() - 2 * DAY).toISOString().slice(0, 10)}&to=${new Date(Date.now() + DAY).toISOString().slice(0, 10)}`);
    await v.page.locator('tbody tr').first().waitFor();
    expect(await v.page.getByLabel('From (UTC day)').inputValue()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await finish(v);
  }, FLOW_MS);

  test('a dashboard:read key sees no admin pages and gets 403 from admin endpoints', async () => {
    const v = await open('/console');
    await signIn(v, dashboardKey);
    expect(await v.page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).toEqual(['Overview', 'Scans']);
    await v.page.goto(`${svc.url}/console/keys`);
    await v.page.getByText('This page needs a key with the admin scope.').waitFor();
    const status = await v.page.evaluate(async () => (await fetch('/api/v1/admin/keys')).status);
    expect(status).toBe(403);
    expect(await v.page.evaluate(async () => (await fetch('/api/v1/dashboard/scans')).status)).toBe(200);
    await shot(v, 'dashboard-only');
    await finish(v);
  }, FLOW_MS);

  test('Keys: create (raw key shown once) and revoke; the revoked key’s session ends at once', async () => {
    const v = await open('/console/keys');
    await signIn(v, admin);
    await v.page.getByLabel('Name').fill('temporary admin');
    await v.page.getByRole('checkbox', { name: /^admin/ }).check();
    await v.page.getByRole('button', { name: 'Create key' }).click();
    const secret = v.page.locator('.secret-value');
    await secret.waitFor();
    const raw = (await secret.textContent())!;
    expect(raw).toMatch(/^sk_live_/);
    await shot(v, 'keys-created');

    const other = await open('/console');
    await signIn(other, raw);
    await other.page.getByRole('heading', { name: 'Overview' }).waitFor();

    const row = v.page.locator('tbody tr', { hasText: 'temporary admin' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke temporary admin' }).click();
    await row.getByText('revoked').waitFor();
    // The key this page is signed in with was used (its session acts with it); a key no request came with says so.
    const lastUsed = async (name: RegExp) => {
      const row = v.page.locator('tbody tr').filter({ has: v.page.locator('td:first-child', { hasText: name }) });
      return (await row.locator('td[data-label="Status"] .muted').textContent())!;
    };
    expect(await lastUsed(/^ops this session$/)).toMatch(/^last used .*\d/);
    await api('POST', '/api/v1/admin/keys', { name: 'never used', scopes: ['dashboard:read'] });
    await v.page.reload();
    await v.page.locator('td:first-child', { hasText: /^never used$/ }).waitFor();
    expect(await lastUsed(/^never used$/)).toBe('never used');
    await shot(v, 'keys');

    await other.page.getByRole('link', { name: 'Scans' }).click();
    await other.page.getByText('Your session has ended. Sign in again.').waitFor();
    expect(await other.page.evaluate(async () => (await fetch('/api/v1/console/session')).status)).toBe(204);
    await finish(other);
    await finish(v);
  }, FLOW_MS);

  test('Stores: connect a platform-A store against the fake platform; its hooks are registered', async () => {
    const v = await open('/console/stores');
    await signIn(v, admin);
    await v.page.getByRole('radio', { name: 'Platform B' }).check();
    expect(await v.page.getByLabel('Store hash', { exact: true }).count()).toBe(1);
    await v.page.getByRole('radio', { name: 'Platform C' }).check();
    expect(await v.page.getByLabel('REST API consumer secret', { exact: true }).count()).toBe(1);
    await v.page.getByRole('radio', { name: 'Platform A' }).check();
    expect(await v.page.getByLabel('Store hash', { exact: true }).count()).toBe(0);
    await v.page.getByLabel('Store domain', { exact: true }).fill(SHOP.domain);
    await v.page.getByLabel('Client secret', { exact: true }).fill(SHOP.clientSecret);
    await v.page.getByLabel('Admin API access token', { exact: true }).fill(SHOP.accessToken);
    await shot(v, 'stores-connect');
    await v.page.getByRole('button', { name: 'Connect store' }).click();
    await v.page.getByText(`Connected ${SHOP.domain}: webhooks registered`).waitFor();
    expect(fake.subscriptions.map((s) => s.topic).sort()).toEqual(['APP_UNINSTALLED', 'PRODUCTS_CREATE', 'PRODUCTS_DELETE', 'PRODUCTS_UPDATE']);
    await v.page.getByRole('link', { name: 'Open the store' }).click();
    await v.page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(await v.page.locator('.badge', { hasText: 'registered' }).count()).toBe(1);
    expect(await v.page.locator('.facts').nth(0).textContent()).toContain('EUR');
    storeId = v.page.url().split('/').pop()!;
    await shot(v, 'store-detail');
    await finish(v);
  }, FLOW_MS);

  test('Catalogue: a webhook-synced product, enrichment edited, the four signal links served', async () => {
    const responses = await fake.deliver(SHOP.domain, 'products/create', platformAProduct(777));
    expect(responses.map((r) => r.status)).toEqual([200]);
    const v = await open(`/console/catalogue?store=${storeId}`);
    await signIn(v, admin);
    const row = v.page.locator('tbody tr', { hasText: 'Waxed Canvas Tote' });
    await row.getByText('not enriched').waitFor();
    await shot(v, 'catalogue');
    // While the stored enrichment loads (held here), its fields are disabled, so nothing typed is lost.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await v.page.route('**/enrichment', async (request) => {
      await held;
      await request.continue();
    });
    await row.getByRole('link').click();
    await v.page.getByLabel('Summary').waitFor();
    expect(await v.page.getByLabel('Summary').isDisabled()).toBe(true);
    expect(await v.page.getByRole('button', { name: 'Save enrichment' }).isDisabled()).toBe(true);
    release();
    await v.page.getByLabel('Summary').fill('A waxed canvas tote that carries a 15-inch laptop.');
    await v.page.getByLabel('Highlights').fill('Water resistant\nLeather handles');
    await v.page.getByLabel('Attributes').fill('Material: waxed canvas\nVolume: 18 l');
    await v.page.getByRole('button', { name: 'Save enrichment' }).click();
    await v.page.getByText('Enrichment saved: the signals now serve it.').waitFor();
    const links = await v.page.locator('.links a').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
    expect(links.map((l) => l.slice(svc.url.length))).toEqual(['jsonld', 'llm', 'md', 'meta'].map((ext) => `/api/v1/platform-a/products/777.${ext}`));
    for (const link of links) expect((await fetch(link)).status).toBe(200);
    expect(await (await fetch(links[2]!)).text()).toContain('A waxed canvas tote that carries a 15-inch laptop.');
    // Opened again, the stored enrichment is in the fields the moment they are enabled: none is
    // enabled empty while the stored text is still on its way in (typing then would be wiped).
    await v.page.unroute('**/enrichment');
    let releaseAgain = () => {};
    const heldAgain = new Promise<void>((resolve) => (releaseAgain = resolve));
    await v.page.route('**/enrichment', async (request) => {
      await heldAgain;
      await request.continue();
    });
    await v.page.reload();
    await v.page.getByLabel('Summary').waitFor();
    expect(await v.page.getByLabel('Summary').isDisabled()).toBe(true);
    // Watched from before the release: mutation records are delivered right after the render that
    // enabled the field, before Preact runs its effects.
    await v.page.evaluate(() => {
      const summary = () => document.querySelector<HTMLTextAreaElement>('form[aria-label="Enrichment"] textarea');
      (window as unknown as { summaryWhenEnabled: Promise<string> }).summaryWhenEnabled = new Promise<string>((resolve) => {
        new MutationObserver(() => {
          const field = summary();
          if (field && !field.disabled) resolve(field.value);
        }).observe(document.body, { subtree: true, childList: true, attributes: true });
      });
    });
    releaseAgain();
    const valueWhenEnabled = v.page.evaluate(() => (window as unknown as { summaryWhenEnabled: Promise<string> }).summaryWhenEnabled);
    expect(await valueWhenEnabled).toBe('A waxed canvas tote that carries a 15-inch laptop.');
    await shot(v, 'product-enrichment');
    await finish(v);
  }, FLOW_MS);

  test('FAQs: a pending FAQ approved in the console renders in the widget on a storefront page', async () => {
    await api('POST', '/api/v1/admin/faqs', { storeId, entityType: 'product', entityRef: 'trail-runner-2', question: 'Are they waterproof?', answer: '<p>The upper is <strong>water-resistant</strong>.</p><script>alert(1)</script>', status: 'pending' });
    await api('POST', '/api/v1/admin/faqs', { storeId, entityType: 'product', entityRef: 'trail-runner-2', question: 'Do they run small?', answer: 'No, true to size.', status: 'pending' });
    const v = await open(`/console/faqs?store=${storeId}`);
    await signIn(v, admin);
    const card = v.page.locator('article.faq', { hasText: 'Are they waterproof?' });
    await card.waitFor();
    expect(await v.page.locator('article.faq').count()).toBe(2);
    // The preview is the widget's own accordion: its sanitiser drops the script, keeps the emphasis.
    expect(await card.locator('.svc-faq__answer').innerHTML()).toBe('<p>The upper is <strong>water-resistant</strong>.</p>');
    await shot(v, 'faqs-queue');
    await card.getByRole('button', { name: 'Edit' }).click();
    await card.getByLabel('Answer').fill('<p>The upper is <strong>water-resistant</strong>, not waterproof.</p>');
    await card.getByRole('button', { name: 'Save' }).click();
    await v.page.locator('article.faq', { hasText: 'not waterproof' }).getByRole('button', { name: 'Approve' }).click();
    await v.page.locator('article.faq', { hasText: 'Do they run small?' }).getByRole('button', { name: 'Reject' }).click();
    await v.page.getByText('Nothing waiting').waitFor();
    await v.page.getByRole('tab', { name: 'By entity' }).click();
    await v.page.getByLabel('Product id, handle or slug').fill('trail-runner-2');
    await v.page.getByRole('button', { name: 'Show FAQs' }).click();
    await v.page.getByText('What the widget shows (1 approved, in display order)').waitFor();
    await shot(v, 'faqs-entity');
    await finish(v);

    widgetKey = (await api('POST', '/api/v1/admin/keys', { name: 'storefront', scopes: ['products:read'], allowedDomains: ['localhost'], storeId })).key;
    const storefront = serveStorefront(svc.url, widgetKey);
    try {
      const shop = await browser.newPage();
      const logs: string[] = [];
      shop.on('console', (m) => logs.push(m.text()));
      await shop.goto(`http://localhost:${storefront.port}/products/trail-runner-2`);
      await shop.locator('#product-faq.svc-faq summary').first().waitFor();
      expect(await shop.locator('.svc-faq summary').allTextContents()).toEqual(['Are they waterproof?']);
      await shop.screenshot({ path: path.join(SCREENSHOTS, 'storefront-widget.png'), fullPage: true });
      await shop.close();
    } finally {
      storefront.stop(true);
    }
  }, FLOW_MS);

  test('Leads: list, verify, rotate (the new token shown once sends a scan), revoke', async () => {
    const signUp = await fetch(`${svc.url}/api/v1/public/leads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'lead@example.org' }) });
    expect(signUp.status).toBe(201);
    const v = await open('/console/leads');
    await signIn(v, admin);
    const row = v.page.locator('tbody tr', { hasText: 'lead@example.org' });
    await row.getByText('not verified').waitFor();
    await row.getByRole('button', { name: 'Verify' }).click();
    await row.getByText('verified', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Rotate token' }).click();
    await row.getByRole('button', { name: 'Issue a new token' }).click();
    const token = (await v.page.locator('.secret-value').textContent())!;
    expect((await fetch(svc.url + TELEMETRY, tokenInit(token, { hostname: 'lead.example.org', signals: {} }))).status).toBe(204);
    await shot(v, 'leads');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke lead@example.org' }).click();
    await row.getByText('revoked').waitFor();
    expect((await fetch(svc.url + TELEMETRY, tokenInit(token, { hostname: 'lead.example.org', signals: {} }))).status).toBe(401);
    // Signing up again with the address makes a lead of its own, marked for the operator.
    const again = await fetch(`${svc.url}/api/v1/public/leads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'lead@example.org' }) });
    expect(again.status).toBe(201);
    expect((await fetch(svc.url + TELEMETRY, tokenInit((await again.json()).apiToken, { hostname: 'lead.example.org', signals: {} }))).status).toBe(204);
    await v.page.reload();
    const repeat = v.page.locator('tbody tr', { hasText: 'repeat sign-up' });
    await repeat.waitFor();
    expect(await repeat.textContent()).toContain('lead@example.org');
    expect(await repeat.getByText('not verified').count()).toBe(1);
    expect(await v.page.locator('tbody tr', { hasText: 'lead@example.org' }).count()).toBe(2);
    await shot(v, 'leads-repeat');
    await finish(v);
  }, FLOW_MS);

  test('Stores: each store shows its catalogue sync (idle, running with counts per kind, failed with the reason, last completed) and Sync now starts a pass', async () => {
    // A second store connected through svc's app: svc has no API access, so its sync fails at once, saying why.
    const viaApp = await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: 'viaapp.myplatform-a.com', currency: 'EUR', credentials: { viaApp: true } });
    fake.productsOf(SHOP.domain).push(...[4101, 4102, 4103].map((id) => platformAProduct(id)));
    fake.entriesOf(SHOP.domain, 'collections').push(platformACollection(2201, { handle: 'summer', title: 'Summer' }), platformACollection(2202, { handle: 'winter', title: 'Winter' }));
    fake.entriesOf(SHOP.domain, 'pages').push(platformAPage(601, { handle: 'shipping', title: 'Shipping & returns' }));
    const v = await open('/console/stores');
    await signIn(v, admin);
    const row = v.page.locator('tbody tr', { hasText: SHOP.domain });
    const failedRow = v.page.locator('tbody tr', { hasText: 'viaapp.myplatform-a.com' });
    await row.locator('.badge', { hasText: 'idle' }).waitFor();
    expect(await row.locator('.sync-summary').textContent()).toMatch(/last completed (?!—)/);
    await failedRow.locator('.badge', { hasText: 'failed' }).waitFor();
    expect(await failedRow.locator('.sync-error').textContent()).toContain('no API access');

    // Hold each collections page a moment so the running state (and the page's own refresh) can be seen.
    fake.hooks.beforeEntriesPage = () => Bun.sleep(2500);
    await row.getByRole('button', { name: `Sync ${SHOP.domain} now` }).click();
    await row.locator('.badge', { hasText: 'running' }).waitFor();
    await row.getByText('3 products · 0 categories · 0 pages').waitFor();
    expect(await row.getByRole('button', { name: `Sync ${SHOP.domain} now` }).isDisabled()).toBe(true);
    await shot(v, 'stores-sync-running');
    fake.hooks.beforeEntriesPage = null;
    // No reload: the page polls while a pass runs.
    await row.locator('.badge', { hasText: 'idle' }).waitFor({ timeout: 20_000 });
    expect((await api('GET', `/api/v1/admin/stores/${storeId}`)).sync).toMatchObject({ state: 'idle', trigger: 'manual', kinds: { products: { items: 3 } } });
    await shot(v, 'stores-sync');

    await failedRow.getByRole('link').click();
    await v.page.getByRole('heading', { name: 'Catalogue sync' }).waitFor();
    expect(await v.page.locator('tbody tr').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('products'), expect.stringContaining('categories'), expect.stringContaining('pages')]));
    expect(await v.page.locator('.sync-summary .sync-error').textContent()).toContain('no API access');
    await shot(v, 'store-sync-failed');
    await finish(v);
    expect(viaApp.sync.state).toBe('failed');
  }, FLOW_MS);

  test('Stores: a store connected without a currency (svc’s app cannot report one) gets it with its credentials', async () => {
    const store = await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: 'nocurrency.myplatform-a.com', credentials: { viaApp: true } });
    expect(store.currency).toBeNull();
    const v = await open(`/console/stores/${store.id}`);
    await signIn(v, admin);
    const form = v.page.locator('section', { has: v.page.getByRole('heading', { name: 'Replace credentials' }) });
    await form.getByLabel('Installed through svc’s app').check();
    await form.getByLabel('Currency (optional)').fill('eur');
    await form.getByRole('button', { name: 'Save credentials and register webhooks' }).click();
    await v.page.locator('dl.facts dd', { hasText: 'EUR' }).waitFor();
    expect((await api('GET', `/api/v1/admin/stores/${store.id}`)).currency).toBe('EUR');
    await finish(v);
  }, FLOW_MS);

  test('Catalogue: the collections and pages sync brought, each linking to its FAQs; an FAQ filed there is what the widget gets on /collections/<handle>', async () => {
    const v = await open(`/console/catalogue?store=${storeId}`);
    await signIn(v, admin);
    await v.page.getByRole('link', { name: 'Categories' }).click();
    const row = v.page.locator('tbody tr', { hasText: 'Summer' });
    await row.waitFor();
    expect(await v.page.locator('tbody tr').count()).toBe(2);
    expect(await row.getByRole('link', { name: 'Summer', exact: true }).getAttribute('href')).toBe(`https://${SHOP.domain}/collections/summer`);
    await shot(v, 'catalogue-categories');
    await v.page.getByRole('link', { name: 'Pages' }).click();
    await v.page.locator('tbody tr', { hasText: 'Shipping & returns' }).waitFor();
    await v.page.getByRole('link', { name: 'Categories' }).click();
    await row.getByRole('link', { name: 'FAQs of Summer' }).click();
    await v.page.getByRole('heading', { name: 'Category “Summer” 2201: 0 FAQs' }).waitFor();
    await v.page.getByLabel('Question').fill('Is the summer range back next year?');
    await v.page.getByLabel('Answer').fill('Yes, every May.');
    await v.page.getByRole('button', { name: 'Add as approved' }).click();
    await v.page.getByRole('heading', { name: 'Category “Summer” 2201: 1 FAQ' }).waitFor();
    await shot(v, 'faqs-category');
    await finish(v);
    // The widget on /collections/summer asks by handle; the FAQ filed under the collection's id answers.
    const res = await fetch(`${svc.url}/api/v1/public/faqs?type=category&ref=summer`, { headers: { 'X-Api-Key': widgetKey, Origin: 'http://localhost' } });
    expect((await res.json()).items.map((i: any) => i.question)).toEqual(['Is the summer range back next year?']);
  }, FLOW_MS);

  test('keyboard: skip link, navigation and a visible focus ring', async () => {
    const v = await open('/console');
    await signIn(v, admin);
    await v.page.getByRole('heading', { name: 'Overview' }).waitFor();
    await v.page.reload();
    await v.page.getByRole('heading', { name: 'Overview' }).waitFor();
    await v.page.keyboard.press('Tab');
    expect(await v.page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    for (let i = 0; i < 4; i++) await v.page.keyboard.press('Tab');
    expect(await v.page.evaluate(() => document.activeElement?.textContent)).toBe('Scans');
    expect(await v.page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await v.page.keyboard.press('Enter');
    await untilFocused(v.page.getByRole('heading', { name: 'Scans', level: 1 }));
    await finish(v);
  }, FLOW_MS);

  test('sign-out ends the session', async () => {
    const v = await open('/console');
    await signIn(v, admin);
    await v.page.getByRole('button', { name: 'Sign out' }).click();
    await v.page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    expect(await v.context.cookies()).toEqual([]);
    await finish(v);
  }, FLOW_MS);
});
