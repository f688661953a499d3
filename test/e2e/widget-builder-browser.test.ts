import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContextOptions } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { BROWSER_AVAILABLE, browserDescribe, consoleSignIn, finishVisit, launchChromium, openVisit, screenshot, type Visit } from '../helpers/browser.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { callAs, spawnServer, type SpawnedServer } from '../helpers/server.ts';

const suite = browserDescribe('widget builder browser tests');

// The console's widget builder in real Chromium against a spawned svc: which keys it refuses and
// why, the one-step widget key, the preview's explanations, and a snippet pasted as is into a
// storefront page. Screenshots at 1280 and 360 px land in test-output/console/.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'console');
const SHOP = { domain: 'trail.myplatform-a.com' };
/** Chromium on a shared 2-core machine: each flow gets a minute. */
const FLOW_MS = 60_000;

let tmp: ReturnType<typeof tempDir>;
let svc: SpawnedServer;
let browser: Browser;
let admin: string;
let storeId = '';
let widgetKey = '';

const api = (method: string, route: string, body?: unknown) => callAs(svc.url, admin, method, route, body);

beforeAll(async () => {
  if (!BROWSER_AVAILABLE) return;
  tmp = tempDir('svc-widget-builder-');
  admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--name', 'ops', '--data-dir', path.join(tmp.dir, 'data')])).json.key;
  svc = await spawnServer({ dataDir: path.join(tmp.dir, 'data') });
  storeId = (await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: SHOP.domain, currency: 'EUR', credentials: { accessToken: 'permanent-token' } })).id;
  await api('POST', '/api/v1/admin/faqs', { storeId, entityType: 'product', entityRef: 'trail-runner-2', question: 'Are they waterproof?', answer: '<p>The upper is <strong>water-resistant</strong>, not waterproof.</p>', status: 'approved' });
  widgetKey = (await api('POST', '/api/v1/admin/keys', { name: 'storefront', scopes: ['products:read'], allowedDomains: ['localhost'], storeId })).key;
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  tmp?.remove();
});

const open = (path_: string, options: BrowserContextOptions = {}): Promise<Visit> => openVisit(browser, svc.url + path_, options);
const shot = (v: Visit, name: string) => screenshot(v, SCREENSHOTS, name);
const finish = finishVisit;
const signIn = consoleSignIn;

suite('widget builder in Chromium', () => {
  test('Widget: a pasted key that may not sit in a page is refused, saying why, with no snippet to copy', async () => {
    const noHosts = (await api('POST', '/api/v1/admin/keys', { name: 'no-hosts', scopes: ['products:read'], storeId })).key;
    const reader = (await runCli(['keys', 'create', '--scopes', 'dashboard:read', '--name', 'reader', '--data-dir', path.join(tmp.dir, 'data')])).json.key;
    const revoked = await api('POST', '/api/v1/admin/keys', { name: 'old-widget', scopes: ['products:read'], allowedDomains: ['localhost'], storeId });
    await api('DELETE', `/api/v1/admin/keys/${revoked.id}`);
    const v = await open(`/console/widget?store=${storeId}`);
    await signIn(v, admin);
    const field = v.page.getByLabel('Existing widget key');
    await field.waitFor();
    const refusal = v.page.locator('.key-choice .field-error');
    const cases: [string, string][] = [
      [admin, 'may not be used in a page: it has more than products:read (admin). A snippet puts its key in the page source'],
      [reader, 'may not be used in a page: it has more than products:read (dashboard:read)'],
      [noHosts, 'may not be used in a page: it lists no storefront domains, so it allows no page'],
      [revoked.key, 'was revoked'],
      [`sk_live_${'Q'.repeat(43)}`, 'No key of this svc starts with sk_live_QQQQ'],
      ['sk_live_short', 'This is not a whole svc key'],
    ];
    for (const [key, reason] of cases) {
      await field.fill(key);
      await v.page.waitForFunction((text) => document.querySelector('.key-choice .field-error')?.textContent?.includes(text), reason);
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      // Refused: no script tag, no Copy button, no preview running with it.
      expect(await v.page.locator('#snippet').count()).toBe(0);
      expect(await v.page.getByRole('button', { name: 'Copy snippet' }).count()).toBe(0);
      expect(await v.page.locator('#snippet-missing').textContent()).toContain('The script tag appears once a key the widget may use is chosen');
      expect(await v.page.getByText('The preview runs once a key the widget may use is chosen.').count()).toBe(1);
    }
    await field.fill(admin);
    await refusal.waitFor();
    expect(await v.page.content()).not.toContain(admin);
    await shot(v, 'widget-refused');

    // A widget key of another store switches the page to that store; choosing the first store again
    // refuses it there, since it would show the other store's FAQs.
    const second = await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: 'second.myplatform-a.com', currency: 'EUR', credentials: { accessToken: 'permanent-token-2' } });
    const secondKey = (await api('POST', '/api/v1/admin/keys', { name: 'second-widget', scopes: ['products:read'], allowedDomains: ['localhost'], storeId: second.id })).key;
    await v.page.reload();
    await field.waitFor();
    await field.fill(secondKey);
    await v.page.locator('#snippet').waitFor();
    expect(await v.page.getByLabel('Store', { exact: true }).inputValue()).toBe(second.id);
    await v.page.getByLabel('Store', { exact: true }).selectOption(storeId);
    await v.page.waitForFunction(() => document.querySelector('.key-choice .field-error')?.textContent?.includes('This key shows the FAQs of second.myplatform-a.com, not of trail.myplatform-a.com'));
    expect(await v.page.locator('#snippet').count()).toBe(0);
    await finish(v);
  }, FLOW_MS);

  test('Widget: one step makes the right key for the store and domain; the preview explains a blank result; the snippet works as pasted', async () => {
    const v = await open(`/console/widget?store=${storeId}`);
    await signIn(v, admin);
    await v.page.getByLabel('Storefront domains').fill('localhost');
    await v.page.getByRole('button', { name: `Create a widget key for ${SHOP.domain}` }).click();
    await v.page.getByText('svc shows the key only now: it is in the script tag below.').waitFor();
    const made = (await api('GET', '/api/v1/admin/keys')).items.find((k: any) => k.name === 'widget localhost');
    expect(made).toMatchObject({ scopes: ['products:read'], storeId, allowedDomains: ['localhost'], revokedAt: null });
    expect(await v.page.locator('.key-ok').textContent()).toBe(`Key “widget localhost” (${made.keyPrefix}…) shows the approved FAQs of ${SHOP.domain} on pages of localhost.`);

    // A blank preview says why, and where to fix it.
    await v.page.getByLabel('Id or handle to preview').fill('no-such-shoe');
    const explanation = v.page.locator('.preview-explanation .notice');
    await explanation.waitFor();
    expect(await explanation.textContent()).toBe(`The preview is blank: there are no approved FAQs for product “no-such-shoe” in ${SHOP.domain}. Approve some in FAQs, or preview another product. FAQs of product “no-such-shoe”`);
    expect(await explanation.getByRole('link').getAttribute('href')).toBe(`/console/faqs?store=${storeId}&type=product&ref=no-such-shoe`);
    await shot(v, 'widget-blank-explained');

    await v.page.getByLabel('Id or handle to preview').fill('trail-runner-2');
    await v.page.getByLabel('Accent colour').fill('#b3125a');
    await v.page.getByLabel('Theme').selectOption('light');
    const frame = v.page.frameLocator('iframe[name="widget-preview"]');
    await frame.locator('.svc-faq summary').first().waitFor();
    expect(await frame.locator('.svc-faq summary').allTextContents()).toEqual(['Are they waterproof?']);
    expect(await frame.locator('.svc-faq').evaluate((e) => getComputedStyle(e).getPropertyValue('--svc-faq-accent').trim())).toBe('#b3125a');
    await v.page.getByText('The widget shows 1 approved FAQ for product “trail-runner-2”.').waitFor();
    const snippet = (await v.page.locator('#snippet').textContent())!;
    expect(snippet).toMatch(new RegExp(`^<script src="${svc.baseUrl}/embed\\.js" async data-api-key="${made.keyPrefix}[A-Za-z0-9_-]{39}" data-style-accent="#b3125a" data-style-theme="light"></script>$`));
    expect(await v.page.getByRole('button', { name: 'Copy snippet' }).count()).toBe(1);
    await frame.locator('.svc-faq summary').first().click();
    await v.page.waitForTimeout(150);
    await shot(v, 'widget');
    await finish(v);

    // Pasted as is into a storefront page allowed by the key, it renders right after itself.
    const storefront = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trail Runner 2</title></head><body><main><h1>Trail Runner 2</h1>${snippet}<footer id="after">footer</footer></main></body></html>`, { headers: { 'content-type': 'text/html;charset=utf-8' } }),
    });
    try {
      const shop = await browser.newPage();
      await shop.goto(`http://localhost:${storefront.port}/products/trail-runner-2`);
      await shop.locator('script[src$="/embed.js"] + .svc-faq summary').first().waitFor();
      expect(await shop.locator('.svc-faq summary').allTextContents()).toEqual(['Are they waterproof?']);
      await shop.close();
    } finally {
      storefront.stop(true);
    }
  }, FLOW_MS);

  test('Widget at 360 px: the builder fits without sideways panning, a refusal included', async () => {
    const v = await open(`/console/widget?store=${storeId}`, { viewport: { width: 360, height: 800 } });
    await signIn(v, admin);
    await v.page.getByLabel('Existing widget key').fill(admin);
    await v.page.locator('.key-choice .field-error').waitFor();
    expect(await v.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await shot(v, 'widget-refused-360');
    await v.page.getByLabel('Existing widget key').fill(widgetKey);
    await v.page.getByLabel('Id or handle to preview').fill('trail-runner-2');
    await v.page.frameLocator('iframe[name="widget-preview"]').locator('.svc-faq summary').first().waitFor();
    await v.page.locator('#snippet').waitFor();
    expect(await v.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await shot(v, 'widget-360');
    await finish(v);
  }, FLOW_MS);
});
