import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { buildProbeClient } from '../../clients/probe/build.ts';
import { startFake } from '../fakes/http.ts';
import { tempDir } from '../helpers/app.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { startProbeServer, type ProbeServer } from '../helpers/probe.ts';

// The recipes of docs/probe-client.md, run as written: the CI scanner script piped into
// `svc probe send --bulk`, and the example browser extension in real Chromium.
const EXAMPLES = path.join(REPO_ROOT, 'clients/probe/examples');
const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
const HAVE_BROWSER = existsSync(CHROMIUM);
if (!HAVE_BROWSER && !process.env.CI) console.warn(`skipping the extension recipe: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
const browserTest = HAVE_BROWSER || process.env.CI ? test : test.skip;

const PAGE = `<!doctype html><html lang="en-GB"><head><meta charset="utf-8">
<title>Trail Runner 2 &amp; Café — Shop</title>
<meta content="Light trail shoe, 240 g." name="description">
<meta name='robots' content='index, follow'>
<link rel="canonical" href="/products/trail-runner-2">
<meta property="og:title" content="Trail Runner 2"><meta property="og:type" content="product">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Trail Runner 2","offers":{"@type":"Offer","price":"129.00","priceCurrency":"EUR"}}</script>
</head><body><h1>Trail <em>Runner</em> 2</h1><h2>Fit</h2><h2>Care</h2><p>€129.00</p></body></html>`;

let svc: ProbeServer;
let storefront: ReturnType<typeof startFake>;

beforeAll(async () => {
  svc = await startProbeServer({ SVC_RATE_AGENT: '100000', SVC_RATE_AUTHED: '100000' });
  storefront = startFake((_request, url) =>
    url.pathname.startsWith('/products/') ? new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : new Response('not found', { status: 404 }),
  );
});
afterAll(async () => {
  storefront?.stop();
  await svc?.stop();
});

/** What the page above must have produced, wherever it was scanned. */
function expectPageSignals(signals: Record<string, any>) {
  expect(signals.title).toEqual({ value: 'Trail Runner 2 & Café — Shop', length: 28 });
  expect(signals.description).toEqual({ value: 'Light trail shoe, 240 g.', length: 24 });
  expect(signals.canonical).toEqual({ value: `${storefront.url}/products/trail-runner-2` });
  expect(signals.robots).toBe('index, follow');
  expect(signals.lang).toBe('en-GB');
  expect(signals.headings).toEqual({ h1: ['Trail Runner 2'], h2: ['Fit', 'Care'] });
  expect(signals.openGraph).toEqual({ 'og:title': 'Trail Runner 2', 'og:type': 'product' });
  expect(signals.jsonLd).toEqual([{ '@context': 'https://schema.org', '@type': 'Product', name: 'Trail Runner 2', offers: { '@type': 'Offer', price: '129.00', priceCurrency: 'EUR' } }]);
}

describe('recipe: a CI step scans a deployed storefront and posts the result', () => {
  test('node scan-pages.mjs URL... | svc probe send --bulk stores one scan per page', async () => {
    const pages = [`${storefront.url}/products/trail-runner-2`, `${storefront.url}/products/trail-runner-3?utm_source=ci`];
    const scanner = Bun.spawn(['node', path.join(EXAMPLES, 'ci/scan-pages.mjs'), ...pages], { stdout: 'pipe', stderr: 'pipe' });
    const [ndjson, scannerErrors, scannerCode] = await Promise.all([new Response(scanner.stdout).text(), new Response(scanner.stderr).text(), scanner.exited]);
    expect({ scannerCode, scannerErrors }).toEqual({ scannerCode: 0, scannerErrors: '' });
    const sent = await runCli(['probe', 'send', '--bulk', '--url', svc.url], { env: { SVC_PROBE_KEY: await svc.key() }, stdin: ndjson });
    expect(sent).toMatchObject({ code: 0, json: { inserted: 2, skipped: 0, errors: [] } });
    const stored = await svc.scans('127.0.0.1');
    expect(stored.map((s) => s.url).sort()).toEqual([`${storefront.url}/products/trail-runner-2`, `${storefront.url}/products/trail-runner-3`]);
    for (const scan of stored) expectPageSignals(scan.signals);
  });

  test('a page that does not answer 200 fails the scanner step', async () => {
    const scanner = Bun.spawn(['node', path.join(EXAMPLES, 'ci/scan-pages.mjs'), `${storefront.url}/missing`], { stdout: 'pipe', stderr: 'pipe' });
    const [stdout, stderr, code] = await Promise.all([new Response(scanner.stdout).text(), new Response(scanner.stderr).text(), scanner.exited]);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toContain('HTTP 404');
  });
});

describe('recipe: a browser extension background worker', () => {
  browserTest('the example extension scans the page it is on and its worker sends the scan with a lead token', async () => {
    const tmp = tempDir('svc-probe-extension-');
    const extension = path.join(tmp.dir, 'extension');
    cpSync(path.join(EXAMPLES, 'extension'), extension, { recursive: true });
    writeFileSync(path.join(extension, 'probe.js'), await buildProbeClient());
    // Point the example at the svc under test, as its comments tell a user to.
    const background = path.join(extension, 'background.js');
    writeFileSync(background, readFileSync(background, 'utf8').replace("'https://svc.example.com'", JSON.stringify(svc.url)));
    const manifestFile = path.join(extension, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    manifest.host_permissions = ['http://127.0.0.1/*'];
    writeFileSync(manifestFile, JSON.stringify(manifest));
    mkdirSync(path.join(tmp.dir, 'profile'));

    const context = await chromium.launchPersistentContext(path.join(tmp.dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      ignoreDefaultArgs: ['--disable-extensions'],
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', `--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
    });
    try {
      const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
      const token = await svc.token();
      await worker.evaluate((svcToken) => (globalThis as any).chrome.storage.local.set({ svcToken }), token);
      const before = await svc.count('127.0.0.1');
      const page = await context.newPage();
      const logs: string[] = [];
      page.on('console', (message) => logs.push(message.text()));
      await page.goto(`${storefront.url}/products/trail-runner-2`);
      for (let i = 0; i < 100 && !logs.some((m) => m.startsWith('svc probe:')); i++) await Bun.sleep(50);
      expect(logs).toContain('svc probe: scan sent');
      expect(await svc.count('127.0.0.1')).toBe(before + 1);
      const [stored] = await svc.scans('127.0.0.1'); // newest first
      expectPageSignals(stored!.signals);
    } finally {
      await context.close();
      tmp.remove();
    }
  }, 30_000);
});
