import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser } from 'playwright-core';
import { fixedClock } from '../../src/lib/clock.ts';
import { createScanRollups } from '../../src/storage/sqlite/scan-rollups.ts';
import { makeTestApp, type TestApp } from '../helpers/app.ts';
import { BROWSER_AVAILABLE, browserDescribe, consoleSignIn, finishVisit, launchChromium, openVisit, screenshot, type Visit } from '../helpers/browser.ts';
import { REPO_ROOT } from '../helpers/cli.ts';
import { scanPayload, signedInit } from '../helpers/probe.ts';

const suite = browserDescribe('console rollup backlog browser tests');

// Issue 29 item 5: the console overview says "Rolling up N scans" while the backlog slows the stats
// (over 10,000 scans, or the oldest waiting over 10 s) and nothing otherwise. The app is served over
// real HTTP with a fixed clock and no roller, so the test decides how old the backlog is and when
// it is rolled up. Screenshots at 1280 and 390 px, light and dark, in test-output/console-backlog/.
const SCREENSHOTS = path.join(REPO_ROOT, 'test-output', 'console-backlog');
const FLOW_MS = 90_000;
const LINE = /^Rolling up/;

let t: TestApp;
let clock: ReturnType<typeof fixedClock>;
let browser: Browser;
let urls = 0;

beforeAll(async () => {
  if (!BROWSER_AVAILABLE) return;
  clock = fixedClock(Date.now());
  t = await makeTestApp({ listen: true, clock, env: { SVC_RATE_AGENT: '1000000' } });
  browser = await launchChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  t?.close();
});

/** `count` scans through bulk, received now (the fixed clock's now). */
async function ingest(count: number): Promise<void> {
  const key = await t.keyWith('probe:scan');
  for (let done = 0; done < count; done += 1000) {
    const scans = Array.from({ length: Math.min(1000, count - done) }, () => scanPayload({ url: `https://shop.example.com/p/${urls++}` }));
    const response = await fetch(`${t.url}/api/v1/probe/scan-bulk`, signedInit(key, JSON.stringify({ scans }), clock.now()));
    expect(response.status).toBe(200);
  }
}

/** Refresh the overview and wait until it has loaded again and shows `scans` in all. */
async function refreshed(v: Visit, scans: number): Promise<void> {
  // The backlog is asked for after the reload has begun (the button says "Refreshing…"): once it is answered, wait for the button to be back.
  const asked = v.page.waitForResponse((response) => response.url().includes('/api/v1/dashboard/rollup-backlog'));
  await v.page.getByRole('button', { name: 'Refresh', exact: true }).click();
  await asked;
  await v.page.waitForFunction(() => [...document.querySelectorAll('button')].some((button) => button.textContent === 'Refresh' && !button.disabled));
  expect(await v.page.locator('.total', { hasText: 'Scans' }).locator('.total-value').textContent()).toBe(scans.toLocaleString('en'));
}

/** The backlog line's text, or null when the overview shows none. */
const backlogLine = async (v: Visit) => {
  const line = v.page.locator('.notice', { hasText: LINE });
  return (await line.count()) === 0 ? null : line.textContent();
};

/** Screenshots of the overview at 1280 and 390 px, light and dark. */
async function screenshots(v: Visit, name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await v.page.emulateMedia({ colorScheme });
    for (const width of [1280, 390]) {
      await v.page.setViewportSize({ width, height: 900 });
      await screenshot(v, SCREENSHOTS, `${name}-${width}-${colorScheme}`);
    }
  }
  await v.page.emulateMedia({ colorScheme: 'light' });
  await v.page.setViewportSize({ width: 1280, height: 900 });
}

suite('the overview and the rollup backlog', () => {
  test('the console shows "Rolling up N scans" only while the backlog slows the stats: not for a few new scans, yes once the oldest waits over 10 s or past 10,000 scans, gone after roll-up', async () => {
    await ingest(3);
    const v = await openVisit(browser, `${t.url}/console/overview`);
    await consoleSignIn(v, await t.keyWith('admin'));
    await v.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await v.page.locator('.total-value', { hasText: /^3$/ }).waitFor();
    // A few scans received just now: the roller has a second to fold them, nothing to say.
    expect(await backlogLine(v)).toBeNull();
    await screenshots(v, 'new-scans');

    // The oldest has waited 11 s: the roller is not keeping up.
    clock.advance(11_000);
    await ingest(1);
    await refreshed(v, 4);
    expect(await backlogLine(v)).toBe('Rolling up 4 scans, the oldest received 11 seconds ago. The stats below count them already, but answer more slowly until they are rolled up.');
    clock.advance(150_000);
    await refreshed(v, 4);
    expect(await backlogLine(v)).toStartWith('Rolling up 4 scans, the oldest received 2 minutes ago.');
    await screenshots(v, 'backlog-old');

    // Rolled up: the line goes.
    await t.rollups().runOnce();
    await refreshed(v, 4);
    expect(await backlogLine(v)).toBeNull();

    // Past 10,000 scans, however new.
    await ingest(10_001);
    await refreshed(v, 10_005);
    expect(await backlogLine(v)).toStartWith('Rolling up 10,001 scans, the oldest received just now.');
    await screenshots(v, 'backlog-large');
    await finishVisit(v);
  }, FLOW_MS);
});
