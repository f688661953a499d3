import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { platformAProduct } from '../fakes/payloads.ts';
import { startFakePlatformA, type FakePlatformA } from '../fakes/platform-a.ts';
import { tempDir } from '../helpers/app.ts';
import { BROWSER_AVAILABLE, browserDescribe, consoleSignIn, finishVisit, launchChromium, openVisit, screenshot, type Visit } from '../helpers/browser.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { callAs, spawnServer, untilStoreSynced, type SpawnedServer } from '../helpers/server.ts';

const suite = browserDescribe('stores browser tests');

// The store page's removal, disconnect and sync pause, and the Stores page's polling, in real
// Chromium against a spawned svc and a fake platform A. Screenshots at 1280 and 360 px go to
// test-output/stores/.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'stores');
const FLOW_MS = 60_000;
const shops = ['remove', 'keep', 'pause', 'busy'].map((name) => ({ domain: `${name}.myplatform-a.com`, accessToken: `tok-${name}`, clientSecret: `secret-${name}`, currency: 'EUR' }));
const [REMOVE, KEEP, PAUSE, BUSY] = shops as [(typeof shops)[number], (typeof shops)[number], (typeof shops)[number], (typeof shops)[number]];

let tmp: ReturnType<typeof tempDir>;
let svc: SpawnedServer;
let fake: FakePlatformA;
let browser: Browser;
let admin: string;
const ids: Record<string, string> = {};

const api = (method: string, route: string, body?: unknown) => callAs(svc.url, admin, method, route, body);

beforeAll(async () => {
  if (!BROWSER_AVAILABLE) return;
  tmp = tempDir('svc-stores-browser-');
  const dataDir = path.join(tmp.dir, 'data');
  fake = startFakePlatformA(shops.map((shop, i) => ({ ...shop, products: [1, 2, 3].map((n) => ({ ...platformAProduct(1000 * (i + 1) + n), handle: `p-${n}` })) })));
  Object.assign(fake.bucket, { maximumAvailable: 100_000, restoreRate: 100_000 });
  admin = (await runCli(['keys', 'create', '--scopes', 'admin', '--name', 'ops', '--data-dir', dataDir])).json.key;
  svc = await spawnServer({ dataDir, env: { SVC_PLATFORM_A_API_BASE: fake.url, SVC_RATE_ANONYMOUS: '1000' } });
  for (const shop of [REMOVE, KEEP, PAUSE]) {
    const store = await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: shop.domain, credentials: { clientSecret: shop.clientSecret, accessToken: shop.accessToken } });
    ids[shop.domain] = store.id;
    await untilStoreSynced(svc.url, admin, store.id);
    const productId = String(1000 * (shops.indexOf(shop) + 1) + 1);
    await api('PUT', `/api/v1/admin/stores/${store.id}/products/${productId}/enrichment`, { summary: 'Sturdy.', highlights: [], attributes: {} });
    for (const question of ['Is it waterproof?', 'Does it fit a laptop?']) await api('POST', '/api/v1/admin/faqs', { storeId: store.id, entityType: 'product', entityRef: productId, question, answer: 'Yes.' });
    await api('POST', '/api/v1/admin/keys', { name: `${shop.domain} widget`, scopes: ['products:read'], storeId: store.id, allowedDomains: [shop.domain] });
  }
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  fake.hooks.beforeProductsPage = null;
  await browser?.close();
  await svc?.stop();
  fake?.stop();
  tmp?.remove();
});

const open = async (route: string, options: BrowserContextOptions = {}): Promise<Visit> => {
  const v = await openVisit(browser, `${svc.url}/console`, options);
  await consoleSignIn(v, admin);
  await v.page.goto(svc.url + route);
  return v;
};
const shot = (v: Visit, name: string) => screenshot(v, SCREENSHOTS, name);
const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);
/** What in `selector` (the dialog) reaches past the window's right edge. */
const beyondWidth = (page: Page, selector: string) =>
  page.evaluate((within) => [...document.querySelectorAll(within)].flatMap((root) => [root, ...root.querySelectorAll('*')]).filter((e) => e.getBoundingClientRect().right > innerWidth).map((e) => e.outerHTML.slice(0, 80)), selector);
const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');

suite('store removal in the console', () => {
  test('"Remove store…" asks in a dialog that names what will be deleted; Escape closes it and focus returns; removing returns to the list, which says what went', async () => {
    const id = ids[REMOVE.domain]!;
    const v = await open(`/console/stores/${id}`);
    const opener = v.page.getByRole('button', { name: 'Remove store…' });
    await opener.click();
    const dialog = v.page.getByRole('dialog', { name: `Remove ${REMOVE.domain}?` });
    await dialog.getByText('3 products').waitFor();
    for (const named of ['2 FAQs', '1 enrichment', '1 API key bound to it (its widget stops working at once)']) expect(await dialog.getByText(named, { exact: false }).count()).toBe(1);
    // Focus starts on Cancel (the action that changes nothing); Tab goes round the dialog's controls
    // (and the browser's own, past the last), never to the page behind it.
    expect(await focusedText(v.page)).toBe('Cancel');
    const reached = new Set<string>();
    for (let i = 0; i < 8; i++) {
      await v.page.keyboard.press('Tab');
      const where = await dialog.evaluate((d) => (d.contains(document.activeElement) ? `${document.activeElement!.tagName} ${document.activeElement!.textContent?.trim() || (document.activeElement as HTMLInputElement).value}` : document.activeElement === document.body ? 'browser' : `outside: ${document.activeElement?.outerHTML.slice(0, 80)}`));
      expect(where).not.toStartWith('outside');
      reached.add(where);
    }
    expect([...reached].sort()).toEqual(['BUTTON Cancel', 'BUTTON Remove store and data', 'INPUT remove', 'browser']);
    await shot(v, 'store-remove-dialog');
    await v.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focusedText(v.page)).toBe('Remove store…');
    expect((await api('GET', `/api/v1/admin/stores/${id}`)).status).toBe('active');

    // Opened again from the keyboard, and confirmed.
    await v.page.keyboard.press('Enter');
    await dialog.getByText('3 products').waitFor();
    await dialog.getByRole('button', { name: 'Remove store and data' }).click();
    await v.page.getByRole('heading', { name: 'Stores', exact: true }).waitFor();
    await v.page.getByText(`Removed ${REMOVE.domain}: 3 products, 2 FAQs, 1 enrichment`).waitFor();
    expect(await v.page.getByText('svc deleted its webhooks at the platform').count()).toBe(1);
    expect(await v.page.getByRole('link', { name: REMOVE.domain }).count()).toBe(0);
    expect(fake.subscriptions.filter((s) => s.shop === REMOVE.domain)).toEqual([]);
    await shot(v, 'stores-after-removal');
    await finishVisit(v);
  }, FLOW_MS);

  test('opened again before the close event of its last closing (a quick Escape, then Enter), the dialog opens', async () => {
    const v = await open(`/console/stores/${ids[PAUSE.domain]!}`);
    const dialog = v.page.getByRole('dialog', { name: `Remove ${PAUSE.domain}?` });
    await v.page.getByRole('button', { name: 'Remove store…' }).click();
    await dialog.getByText('3 products').waitFor();
    // Closed as Escape closes it (the close event follows a task later) and opened again within the
    // same task, so the click comes first: the order a busy machine gave a person's Escape, Enter.
    await v.page.evaluate(() => {
      document.querySelector('dialog')!.close();
      document.querySelector<HTMLButtonElement>('.danger-zone > button')!.click();
    });
    await dialog.getByText('3 products').waitFor();
    expect(await focusedText(v.page)).toBe('Cancel');
    await v.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focusedText(v.page)).toBe('Remove store…');
    await finishVisit(v);
  }, FLOW_MS);

  test('at 360 px the dialog fits, and "Disconnect only" keeps the data and shows the store disconnected', async () => {
    const id = ids[KEEP.domain]!;
    const v = await open(`/console/stores/${id}`, { viewport: { width: 360, height: 740 } });
    await v.page.getByRole('button', { name: 'Remove store…' }).click();
    const dialog = v.page.getByRole('dialog', { name: `Remove ${KEEP.domain}?` });
    await dialog.getByText('3 products').waitFor();
    expect(await fitsWidth(v.page)).toBe(true);
    expect(await beyondWidth(v.page, '.dialog')).toEqual([]);
    await shot(v, 'store-remove-dialog-360');
    await dialog.getByRole('radio', { name: /Disconnect only/ }).check();
    await dialog.getByRole('button', { name: 'Disconnect store' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await v.page.getByText(`Disconnected ${KEEP.domain}; its data is kept.`).waitFor();
    expect(await v.page.locator('.badge', { hasText: 'disconnected' }).count()).toBe(1);
    expect(await v.page.getByRole('button', { name: 'Pause sync' }).count()).toBe(0);
    expect(await fitsWidth(v.page)).toBe(true);
    await shot(v, 'store-disconnected-360');
    const store = await api('GET', `/api/v1/admin/stores/${id}`);
    expect(store).toMatchObject({ status: 'inactive', hooks: { status: 'unregistered' } });
    expect((await api('GET', `/api/v1/admin/stores/${id}/data`)).counts).toMatchObject({ products: 3, faqs: 2, keys: 1 });
    await finishVisit(v);
  }, FLOW_MS);

  test('sync paused and resumed from the store page: the state shows, Sync now waits for the resume', async () => {
    const id = ids[PAUSE.domain]!;
    const v = await open(`/console/stores/${id}`);
    await v.page.getByRole('button', { name: 'Pause sync' }).click();
    await v.page.locator('.badge', { hasText: 'paused' }).waitFor();
    expect(await v.page.getByText('no pass runs until it is resumed', { exact: false }).count()).toBe(1);
    expect(await v.page.getByRole('button', { name: `Sync ${PAUSE.domain} now` }).isDisabled()).toBe(true);
    expect((await api('GET', `/api/v1/admin/stores/${id}`)).sync.state).toBe('paused');
    await shot(v, 'store-sync-paused');
    await v.page.getByRole('button', { name: 'Resume sync' }).click();
    await v.page.getByRole('button', { name: 'Pause sync' }).waitFor();
    expect(await v.page.getByRole('button', { name: `Sync ${PAUSE.domain} now` }).isDisabled()).toBe(false);
    expect((await api('GET', `/api/v1/admin/stores/${id}`)).sync.pausedAt).toBeNull();
    await finishVisit(v);
  }, FLOW_MS);
});

suite('the Stores page polls only while something runs', () => {
  test('every 2 s after a change, twice as long each time nothing changed up to 30 s, and not at all once nothing runs', async () => {
    // A store whose import the platform holds: its pass stays `running` with nothing changing.
    fake.hooks.beforeProductsPage = ({ shop }) => (shop === BUSY.domain ? new Promise<Response>(() => {}) : undefined);
    const busy = await api('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: BUSY.domain, credentials: { clientSecret: BUSY.clientSecret, accessToken: BUSY.accessToken } });
    expect(busy.sync.state).toBe('running');

    const v = await openVisit(browser, `${svc.url}/console`);
    await consoleSignIn(v, admin);
    // The list's loads, with the page's (fake) time when each was sent.
    await v.page.addInitScript(() => {
      const w = window as unknown as { polls: number[]; inFlight: number };
      w.polls = [];
      w.inFlight = 0;
      const fetch = window.fetch.bind(window);
      window.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
        const listing = new URL(String(input), location.href).pathname === '/api/v1/admin/stores';
        if (!listing) return fetch(input, init);
        w.polls.push(Date.now());
        w.inFlight++;
        try {
          return await fetch(input, init);
        } finally {
          w.inFlight--;
        }
      }) as typeof window.fetch;
    });
    await v.page.clock.install();
    await v.page.goto(`${svc.url}/console/stores`);
    await v.page.getByRole('link', { name: BUSY.domain }).waitFor();
    // Time stands still from here: only `advance` moves it (the first planned load, 2 s after the
    // list's, is still ahead). The page's clock runs on until the pause: on a busy machine it can
    // pass the chosen instant before the pause arrives, which refuses a time in the past; the pause
    // is then tried again from the page's new time.
    for (let paused = false; !paused; ) {
      const at = (await v.page.evaluate(() => Date.now())) + 100;
      paused = await v.page.clock.pauseAt(at).then(
        () => true,
        (error: Error) => {
          if (!/to the past/.test(error.message)) throw error;
          return false;
        },
      );
    }
    const polls = () => v.page.evaluate(() => (window as unknown as { polls: number[] }).polls);
    /** Runs the page's clock `ms` forward in steps, letting each load finish (real time) before the next step. */
    const advance = async (ms: number) => {
      for (let run = 0; run < ms; run += 250) {
        await v.page.clock.runFor(250);
        await v.page.waitForFunction(() => (window as unknown as { inFlight: number }).inFlight === 0);
      }
    };
    while ((await polls()).length < 7) await advance(1_000);
    const times = await polls();
    const waits = times.slice(1).map((at, i) => at - times[i]!);
    // Each wait is the planned one plus at most a step and a frame before the effect that plans it ran.
    [2_000, 4_000, 8_000, 16_000, 30_000, 30_000].forEach((planned, i) => expect(waits[i]! - planned).toBeWithin(0, 1_000));

    // Nothing runs any more (its sync paused): the next load sees it, and then no timer is left.
    await api('POST', `/api/v1/admin/stores/${busy.id}/sync/pause`);
    await advance(31_000);
    const afterPause = (await polls()).length;
    await v.page.locator('.badge', { hasText: 'paused' }).waitFor();
    await advance(120_000);
    expect((await polls()).length).toBe(afterPause);
    await shot(v, 'stores-polling-stopped');
    await finishVisit(v);
  }, 120_000);
});
