import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { browserDescribe, launchChromium } from '../helpers/browser.ts';
import { REPO_ROOT } from '../helpers/cli.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

const suite = browserDescribe('API reference browser test');

// The API reference page as a reader opens it: real Chromium against a spawned svc (or the compiled
// binary with SVC_E2E_BINARY=dist/svc), every request to anything but the server refused, so the
// page must work offline, and any CSP violation or page error fails. Screenshot in test-output/api-reference/.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'api-reference');

let tmp: ReturnType<typeof tempDir>;
let svc: SpawnedServer;
let browser: Browser;

beforeAll(async () => {
  tmp = tempDir();
  const binary = process.env.SVC_E2E_BINARY;
  svc = await spawnServer({ dataDir: path.join(tmp.dir, 'data'), ...(binary ? { command: [path.resolve(REPO_ROOT, binary)], cwd: tmp.dir } : {}) });
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  tmp?.remove();
});

suite('API reference page', () => {
  test('renders every operation from /openapi.json offline, under the strict CSP', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin === new URL(svc.url).origin) return route.continue();
      outside.push(url.href);
      return route.abort();
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) problems.push(`CSP: ${m.text()}`);
    });
    const response = await page.goto(`${svc.url}/docs/api`);
    const csp = response!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');

    await page.getByText('Send one page scan').first().waitFor({ timeout: 30_000 });
    const operations = await page.locator('.opblock').count();
    const document = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { paths: Record<string, object> };
    const documented = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    expect(operations).toBe(documented);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'reference.png') });

    // Open the telemetry operation: its payload schema and the probe auth schemes are shown.
    await page.getByText('Send one page scan').first().click();
    await page.getByText('X-Probe-Token').first().waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'telemetry-operation.png'), fullPage: false });

    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await context.close();
  }, 90_000);
});
