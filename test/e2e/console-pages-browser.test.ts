import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { platformACollection, platformAPage, platformAProduct } from '../fakes/payloads.ts';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { tempDir } from '../helpers/app.ts';
import { BROWSER_AVAILABLE, browserDescribe, consoleSignIn, finishVisit, hoverPlotEnd, launchChromium, untilFocused, openVisit, screenshot, settled, type Visit } from '../helpers/browser.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { signedInit } from '../helpers/probe.ts';
import { callAs, spawnServer, untilStoreSynced, type SpawnedServer } from '../helpers/server.ts';

const suite = browserDescribe('console pages browser tests');

// The console as a person sees it on a fresh instance, then full of realistic data (long names, many
// rows) at 360 px (a small phone) and at 1280 px: no page pans sideways, every action and every
// navigation item is reachable, empty pages say what is true and what to do. Screenshots of every
// page at both widths are left in test-output/console-pages/ to look at. Then what the pages say:
// months on the Overview, product variants and warnings, FAQ cards by title, errors in words.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'console-pages');
const LONG_SHOP = 'a-storefront-with-a-rather-long-name-for-phones.myplatform-a.com';
const SHOP = { domain: LONG_SHOP, accessToken: 'shpat-layout', clientSecret: 'layout-secret', currency: 'EUR' };
const LONG_HOST = 'the-longest-storefront-hostname-anyone-registered.example.org';
const DAY = 86_400_000;
const FLOW_MS = 90_000;
const NAV = ['Overview', 'Scans', 'Keys', 'Leads', 'Stores', 'Catalogue', 'FAQs', 'Widget'];
const PHONE = { width: 360, height: 740 };

let tmp: ReturnType<typeof tempDir>;
let svc: SpawnedServer;
let fake: FakePlatformA;
let browser: Browser;
let admin: string;
let storeId = '';
let scanId = '';

const api = (method: string, route: string, body?: unknown) => callAs(svc.url, admin, method, route, body);
const open = (route: string, viewport = PHONE): Promise<Visit> => openVisit(browser, svc.url + route, { viewport });

/** A product of the long-named shop: a long title, three variants, the second with the barcode "12345" (not a GTIN). */
const product = (id: number, title: string) => ({ ...platformAProduct(id, { title, variants: [{}, { barcode: '12345' }] }), handle: `product-${id}` });

beforeAll(async () => {
  if (!BROWSER_AVAILABLE) return;
  tmp = tempDir('svc-console-pages-');
  const dataDir = path.join(tmp.dir, 'data');
  fake = startFakePlatformA([
    {
      ...SHOP,
      products: [product(1004, 'Waxed Canvas Weekender Tote with Leather Handles and a Padded Laptop Sleeve'), ...Array.from({ length: 30 }, (_, i) => product(2000 + i, `Everyday Bottle ${i + 1}`))],
      collections: [platformACollection(2201, { handle: 'summer-collection-with-a-long-handle', title: 'Summer essentials for long weekends away' })],
      pages: [platformAPage(601, { handle: 'shipping', title: 'Shipping & returns' })],
    },
  ]);
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--name', 'ops', '--data-dir', dataDir])).json.key;
  svc = await spawnServer({ dataDir, env: { SVC_PLATFORM_A_API_BASE: fake.url, SVC_RATE_ANONYMOUS: '1000' } });
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  fake?.stop();
  tmp?.remove();
});

/** Signs in on the page a visit opened and waits for the page's heading. */
async function signIn(v: Visit, heading: string | RegExp): Promise<void> {
  await consoleSignIn(v, admin);
  await v.page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** The page is no wider than the window: nothing makes a person pan sideways. */
const pageWidth = (page: Page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));

/** Each navigation item is inside the window and is what a tap at its centre hits. */
const unreachableNavItems = (page: Page) =>
  page.evaluate((names) => {
    const nav = document.querySelector('nav[aria-label="Console"]')!;
    return names.filter((name) => {
      const link = [...nav.querySelectorAll('a')].find((a) => a.textContent === name);
      if (!link) return true;
      const box = link.getBoundingClientRect();
      if (box.width === 0 || box.left < 0 || box.right > innerWidth) return true;
      return !link.contains(document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2));
    });
  }, NAV);

/** Links and buttons of the page that a person cannot see without panning or scrolling a box sideways. */
const offScreenControls = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('main a, main button')]
      .filter((control) => control.getClientRects().length > 0 && !control.closest('.visually-hidden, details:not([open])'))
      .filter((control) => {
        const box = control.getBoundingClientRect();
        return box.left < 0 || box.right > innerWidth + 0.5;
      })
      .map((control) => control.textContent),
  );

/** Tables that scroll sideways inside their box without saying so. */
const unexplainedScrollBoxes = (page: Page) =>
  page.evaluate(() => [...document.querySelectorAll('main .table-wrap')].filter((box) => box.scrollWidth > box.clientWidth + 1 && box.closest('details:not([open])') === null && !box.querySelector('.table-hint')).length);

suite('a fresh instance', () => {
  test('loading the console logs no failed request; the key field is focused; every empty page says what is true and what to do', async () => {
    const v = await open('/console', { width: 1280, height: 900 });
    const failed: string[] = [];
    v.page.on('response', (r) => r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`));
    await v.page.reload();
    await v.page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    expect(failed).toEqual([]);
    await untilFocused(v.page.getByLabel('API key'));
    await screenshot(v, SCREENSHOTS, 'fresh-sign-in');
    await signIn(v, 'Overview');
    await v.page.getByText('No scans in this range yet.').waitFor();

    const empty = async (route: string, heading: string, text: RegExp, name: string) => {
      await v.page.goto(svc.url + route);
      await v.page.getByRole('heading', { level: 1, name: heading }).waitFor();
      const box = v.page.locator('.empty', { hasText: text });
      await box.waitFor();
      await screenshot(v, SCREENSHOTS, `fresh-${name}`);
      return (await box.textContent())!;
    };
    expect(await empty('/console/scans', 'Scans', /No scans yet/, 'scans')).not.toContain('match');
    expect(await empty('/console/leads', 'Leads', /No sign-ups yet/, 'leads')).not.toContain('match');
    await empty('/console/stores', 'Stores', /No stores yet/, 'stores');
    await empty('/console/catalogue', 'Catalogue', /No stores yet/, 'catalogue');
    await empty('/console/faqs', 'FAQs', /Connect a store/, 'faqs');
    expect(failed).toEqual([]);
    await finishVisit(v);
  }, FLOW_MS);
});

/** Realistic data: scans over five months from many countries, long names, a store with a catalogue, FAQs, leads and keys. */
async function seed(): Promise<void> {
  const dataDir = path.join(tmp.dir, 'data');
  const probeKey = (await runCli(['keys', 'create', '--scopes', 'probe:scan', '--data-dir', dataDir])).json.key;
  const countries = ['DE', 'FR', 'US', 'GB', 'NL', 'CH', 'AT', 'SE'];
  const grades = [['A', 94], ['B', 81], ['C', 66], ['D', 52], ['E', 40], ['F', 23]] as const;
  const scans = Array.from({ length: 140 }, (_, i) => {
    const [grade, percentage] = grades[i % grades.length]!;
    const hostname = i % 3 === 0 ? LONG_HOST : `store-${i % 7}.example.org`;
    return {
      url: `https://${hostname}/products/a-product-with-a-long-handle-${i}`,
      hostname,
      scannedAt: new Date(Date.now() - ((i * 37) % 150) * DAY).toISOString(),
      platform: { platform: ['platform-a', 'platform-b', 'platform-c', 'custom'][i % 4], confidence: 0.8 },
      pageType: ['product', 'collection', 'home', 'page'][i % 4],
      country: countries[i % countries.length],
      signals: { title: { value: `Page ${i}`, length: 6 } },
      signalPresence: { title: true, description: i % 2 === 0 },
      quality: { grade, percentage },
    };
  });
  const res = await fetch(`${svc.url}/api/v1/probe/scan-bulk`, signedInit(probeKey, JSON.stringify({ scans }), Date.now()));
  expect(res.status).toBe(200);
  scanId = (await api('GET', '/api/v1/dashboard/scans?limit=1')).items[0].id;

  const store = await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: SHOP.domain, credentials: { clientSecret: SHOP.clientSecret, accessToken: SHOP.accessToken } });
  storeId = store.id;
  await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: 'a-second-store-installed-through-the-app.myplatform-a.com', currency: 'EUR', credentials: { viaApp: true } });
  await untilStoreSynced(svc.url, admin, storeId);

  for (const [ref, question] of [['1004', 'Does the padded sleeve fit a 16-inch laptop with a protective case?'], ['product-2003', 'Is the bottle dishwasher safe?'], ['2201', 'When does the summer collection come back?']] as const) {
    await api('POST', '/api/v1/admin/faqs', { storeId, entityType: ref === '2201' ? 'category' : 'product', entityRef: ref, question, answer: '<p>Yes: see the <strong>size guide</strong>.</p>', status: 'pending' });
  }
  for (let i = 0; i < 12; i++) {
    await fetch(`${svc.url}/api/v1/public/leads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `scanner-author-with-a-long-address-${i}@an-example-organisation.example.org` }) });
  }
  await api('POST', '/api/v1/admin/keys', { name: 'storefront widget for the long-named shop', scopes: ['products:read'], storeId, allowedDomains: [SHOP.domain, 'www.a-storefront-with-a-rather-long-name.example.org', '*.another-storefront.example.org'] });
  await api('POST', '/api/v1/admin/keys', { name: 'analyst', scopes: ['dashboard:read'] });
}

/** Every console page, with what shows once it has loaded. */
const PAGES = (): [name: string, route: string, heading: string | RegExp, loaded: string][] => [
  ['overview', '/console/overview', 'Overview', '.chart canvas'],
  ['scans', '/console/scans', 'Scans', 'tbody tr'],
  ['scan', `/console/scans/${scanId}`, /example\.org/, '.facts'],
  ['keys', '/console/keys', 'API keys', 'tbody tr'],
  ['leads', '/console/leads', 'Leads', 'tbody tr'],
  ['stores', '/console/stores', 'Stores', 'tbody tr'],
  ['store', `/console/stores/${storeId}`, LONG_SHOP, '.facts'],
  ['catalogue', `/console/catalogue?store=${storeId}`, 'Catalogue', 'tbody tr'],
  ['catalogue-categories', `/console/catalogue?store=${storeId}&kind=categories`, 'Catalogue', 'tbody tr'],
  ['product', `/console/catalogue/${storeId}/1004`, /Waxed Canvas Weekender/, '.data-table tbody tr'],
  ['faqs', `/console/faqs?store=${storeId}`, 'FAQs', 'article.faq'],
  ['widget', `/console/widget?store=${storeId}`, 'Widget', '.key-choice'],
];

suite('the console full of data', () => {
  test('at 360 px no page pans sideways, every link and button is in view (none off in a scrolled box) and every navigation item is reachable; at 720 px a table too wide scrolls in its box and says so; screenshots at 360, 720 and 1280 px', async () => {
    await seed();
    const v = await open('/console/overview');
    await signIn(v, 'Overview');
    const wide: string[] = [];
    for (const [name, route, heading, loaded] of PAGES()) {
      // A phone, a small tablet (where wide tables scroll inside their boxes), a desktop.
      for (const viewport of [PHONE, { width: 720, height: 900 }, { width: 1280, height: 900 }]) {
        await v.page.setViewportSize(viewport);
        await v.page.goto(svc.url + route);
        await v.page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await v.page.locator(loaded).first().waitFor();
        // A table's box learns it overflows (and says so) a frame after its layout.
        await settled(v.page);
        const width = await pageWidth(v.page);
        if (width.scroll > width.inner) wide.push(`${name} at ${viewport.width} px: ${width.scroll} px wide`);
        expect([name, await unreachableNavItems(v.page)]).toEqual([name, []]);
        if (viewport.width !== 720) expect([name, viewport.width, await offScreenControls(v.page)]).toEqual([name, viewport.width, []]);
        expect([name, viewport.width, await unexplainedScrollBoxes(v.page)]).toEqual([name, viewport.width, 0]);
        await screenshot(v, SCREENSHOTS, `${name}-${viewport.width}`);
      }
    }
    expect(wide).toEqual([]);
    await finishVisit(v);
  }, 240_000);
});

suite('what the pages say', () => {
  test('Overview, all time per month: a bar per month on its start, labelled by month', async () => {
    const v = await open('/console/overview', { width: 1280, height: 900 });
    await signIn(v, 'Overview');
    // The caption changes with the controls, before the month stats arrive: wait for their answer.
    // All time asks with no `from`: a month answer of the earlier range (its request sent before the range changed) is not the one.
    const monthStats = v.page.waitForResponse((response) => response.url().includes('/api/v1/dashboard/stats') && response.url().includes('groupBy=month') && !response.url().includes('from='));
    await v.page.getByRole('combobox', { name: 'Range' }).selectOption('all');
    await v.page.getByLabel('Scans per', { exact: true }).selectOption('month');
    await monthStats;
    await v.page.waitForFunction(() => document.querySelector('.chart figcaption')?.textContent === 'Scans per month');
    const chart = v.page.locator('.chart').first();
    // Then for the table to show them (rendered after the answer): labels of months, not days.
    // (The earlier range's month answer, if it came first, may show for a moment: wait for this one's five months or more.)
    await v.page.waitForFunction(() => /^[A-Z][a-z]+ \d{4}$/.test(document.querySelector('.chart .chart-data tbody th')?.textContent ?? '') && (document.querySelector('.chart')?.querySelectorAll('.chart-data tbody th').length ?? 0) >= 5);
    const periods = await chart.locator('.chart-data tbody th').allTextContents();
    // Scans reach back ~150 days: six calendar months at most, each named, the last one this month.
    expect(periods.length).toBeGreaterThanOrEqual(5);
    expect(periods.length).toBeLessThanOrEqual(6);
    for (const period of periods) expect(period).toMatch(/^(January|February|March|April|May|June|July|August|September|October|November|December) \d{4}$/);
    expect(periods.at(-1)).toBe(new Date().toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }));
    const tip = await hoverPlotEnd(v.page, chart, 10);
    expect(await tip.locator('strong').textContent()).toBe(periods.at(-1)!);
    await v.page.mouse.move(0, 0);
    await screenshot(v, SCREENSHOTS, 'overview-all-time-months');
    // The grade chart's bars wear the grade badges' colours: green for A and B, red for E and F.
    const colours = await v.page.evaluate(() => ['--ok', '--danger'].map((name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim()));
    const grade = v.page.locator('.chart', { hasText: 'By grade' }).locator('canvas');
    const inked = await grade.evaluate((canvas: HTMLCanvasElement, hex: string[]) => {
      const rgb = hex.map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      const counts = rgb.map(() => 0);
      for (let i = 0; i < data.length; i += 4) rgb.forEach((c, n) => Math.abs(data[i]! - c[0]!) + Math.abs(data[i + 1]! - c[1]!) + Math.abs(data[i + 2]! - c[2]!) < 6 && counts[n]!++);
      return counts;
    }, colours);
    expect(inked[0]).toBeGreaterThan(200);
    expect(inked[1]).toBeGreaterThan(200);
    await finishVisit(v);
  }, FLOW_MS);

  test('Scans: the country filter offers the countries present, by name and code', async () => {
    const v = await open('/console/scans', { width: 1280, height: 900 });
    await signIn(v, 'Scans');
    const country = v.page.getByLabel('Country');
    await country.locator('option', { hasText: 'Germany (DE)' }).waitFor({ state: 'attached' });
    expect(await country.locator('option').allTextContents()).toEqual(['Any', 'Austria (AT)', 'France (FR)', 'Germany (DE)', 'Netherlands (NL)', 'Sweden (SE)', 'Switzerland (CH)', 'United Kingdom (GB)', 'United States (US)']);
    await country.selectOption('DE');
    await v.page.getByRole('button', { name: 'Apply filters' }).click();
    await v.page.waitForURL(/country=DE/);
    // Every 8th of the 140 scans is from Germany.
    await v.page.getByText('Page 1 · 18 shown').waitFor();
    expect(new Set(await v.page.locator('tbody td[data-label="Country"]').allTextContents())).toEqual(new Set(['DE']));
    await finishVisit(v);
  }, FLOW_MS);

  test('the product page: variants, the barcode kept out of the signals and why, SKU and GTIN in words, a link to its FAQs named by title', async () => {
    const v = await open(`/console/catalogue/${storeId}/1004`, { width: 1280, height: 900 });
    await signIn(v, /Waxed Canvas Weekender/);
    const variants = v.page.locator('section', { has: v.page.getByRole('heading', { name: 'Variants (3)' }) });
    expect(await variants.locator('tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/^Olive\s+TOTE-1004-OLIVE\s+4006381333931\s+89\.00 EUR \(was 99\.00\)\s+In stock$/),
      expect.stringMatching(/^Navy\s+TOTE-1004-NAVY\s+12345: not a GTIN\s+89\.00 EUR \(was 99\.00\)\s+Out of stock$/),
      expect.stringMatching(/^Sand\s+TOTE-1004-SAND\s+4006381333955\s+99\.00 EUR\s+In stock$/),
    ]);
    expect(await v.page.locator('.notice.warn').textContent()).toContain('The barcode “12345” of variant Navy is not published as a GTIN: a GTIN has 8, 12, 13 or 14 digits.');
    const facts = v.page.locator('dl.facts');
    expect(await facts.locator('dt:has-text("SKU") + dd').textContent()).toBe('One per variant: see Variants');
    expect(await facts.locator('dt:has-text("GTIN") + dd').textContent()).toBe('2 of 3 variants have one: see Variants');
    expect(await facts.locator('dt:has-text("Availability") + dd').textContent()).toBe('In stock');
    await v.page.getByRole('link', { name: 'FAQs of this product' }).click();
    await v.page.getByRole('heading', { level: 2, name: /Product “Waxed Canvas Weekender Tote/ }).waitFor();
    expect(await v.page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/: 1 FAQ$/);
    await finishVisit(v);
  }, FLOW_MS);

  test('FAQ cards name products and categories by title; one titles request per entity type, not one per card', async () => {
    const v = await open(`/console/faqs?store=${storeId}`, { width: 1280, height: 900 });
    const lookups: string[] = [];
    v.page.on('request', (r) => r.url().includes('/titles?') && lookups.push(new URL(r.url()).searchParams.get('type')!));
    await signIn(v, 'FAQs');
    await v.page.locator('article.faq', { hasText: 'Does the padded sleeve' }).getByText('Product “Waxed Canvas Weekender Tote with Leather Handles and a Padded Laptop Sleeve”').waitFor();
    await v.page.locator('article.faq', { hasText: 'dishwasher' }).getByText('Product “Everyday Bottle 4”').waitFor();
    await v.page.locator('article.faq', { hasText: 'summer collection' }).getByText('Category “Summer essentials for long weekends away”').waitFor();
    expect(lookups.sort()).toEqual(['category', 'product']);
    await finishVisit(v);
  }, FLOW_MS);

  test('Keys: an API refusal is a sentence for the page (no code, no CLI hint); revoking the key of this session warns that it ends it, and whether it is the last admin key', async () => {
    const temporary = (await api('POST', '/api/v1/admin/keys', { name: 'temporary admin', scopes: ['admin'] })).key;
    const v = await open('/console/keys', { width: 1280, height: 900 });
    await consoleSignIn(v, temporary);
    await v.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await v.page.getByRole('checkbox', { name: /products:read/ }).check();
    await v.page.getByRole('button', { name: 'Create key' }).click();
    const refusal = v.page.locator('.notice.error');
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe('A products:read key serves the FAQ widget of one store: choose the store it is for.');

    const own = v.page.locator('tbody tr', { hasText: 'temporary admin' });
    expect(await own.getByText('this session').count()).toBe(1);
    await own.getByRole('button', { name: 'Revoke' }).click();
    expect(await own.locator('.confirm-warning').textContent()).toBe('You are signed in with this key: revoking it ends this session.');
    await screenshot(v, SCREENSHOTS, 'keys-revoke-own');
    await own.getByRole('button', { name: 'Revoke temporary admin and sign out' }).click();
    await v.page.getByText('Your session has ended. Sign in again.').waitFor();
    await finishVisit(v);

    // Signed in with the one admin key left: revoking it would also lock everyone out of the admin pages.
    const last = await open('/console/keys', { width: 1280, height: 900 });
    await signIn(last, 'API keys');
    const ops = last.page.locator('tbody tr', { hasText: 'ops' }).filter({ hasText: 'this session' });
    await ops.getByRole('button', { name: 'Revoke' }).click();
    expect(await ops.locator('.confirm-warning').textContent()).toContain('it is the last active admin key');
    await ops.getByRole('button', { name: 'Cancel' }).click();
    // Another key's revocation warns of nothing.
    const analyst = last.page.locator('tbody tr', { hasText: 'analyst' });
    await analyst.getByRole('button', { name: 'Revoke' }).click();
    expect(await analyst.locator('.confirm-warning').count()).toBe(0);
    await finishVisit(last);
  }, FLOW_MS);
});
