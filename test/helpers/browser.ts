import { describe, expect } from 'bun:test';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';

// Browser tests run real Chromium (Debian's). CI installs it and always runs them (a missing
// browser fails there); a developer machine without it skips them, saying so.
const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const BROWSER_AVAILABLE = existsSync(CHROMIUM) || Boolean(process.env.CI);

/** `describe` when the browser tests can run, else `describe.skip` with a warning naming what is missing. */
export function browserDescribe(what: string): typeof describe | typeof describe.skip {
  if (BROWSER_AVAILABLE) return describe;
  console.warn(`skipping ${what}: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  return describe.skip;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** One page in a fresh browser profile (no cookies), with what went wrong on it. */
export interface Visit {
  context: BrowserContext;
  page: Page;
  problems: string[];
}

/** Opens `url` in a fresh profile (1280 px wide unless told otherwise) that records page errors and CSP violations. */
export async function openVisit(browser: Browser, url: string, options: BrowserContextOptions = {}): Promise<Visit> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) problems.push(`CSP: ${m.text()}`);
  });
  await page.goto(url);
  return { context, page, problems };
}

/**
 * Waits two frames of the page: what the first frame's layout set off (a ResizeObserver's callback,
 * the re-render its state change makes) has been drawn by the end of the second. Measure after it.
 */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}

/** A full-page screenshot to look at: `<dir>/<name>.png`. */
export async function screenshot(v: Visit, dir: string, name: string): Promise<void> {
  await v.page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** Every visit ends the same way: no page error and no CSP violation happened. */
export async function finishVisit(v: Visit): Promise<void> {
  expect(v.problems).toEqual([]);
  await v.context.close();
}

/** Signs in to the console on its sign-in page with an API key. */
export async function consoleSignIn(v: Visit, key: string): Promise<void> {
  await v.page.getByLabel('API key').fill(key);
  await v.page.getByRole('button', { name: 'Sign in' }).click();
  await v.page.getByRole('navigation', { name: 'Console' }).waitFor();
}

/**
 * Hovers `chart`'s plot `fromRight` px from its right end, half way up, until its tooltip shows;
 * answers the tooltip. The plot is drawn after its data table (an effect after paint) and drawn
 * anew for each answer, so a plot measured just before a redraw is gone by the time the mouse
 * moves: measure and move again.
 */
export async function hoverPlotEnd(page: Page, chart: Locator, fromRight: number): Promise<Locator> {
  const tip = chart.locator('.chart-tip');
  for (let tries = 1; ; tries++) {
    const box = await chart.locator('.u-over').boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width - fromRight, box.y + box.height / 2);
      if (await tip.waitFor({ timeout: 1_000 }).then(() => true, () => false)) return tip;
    }
    if (tries === 20) throw new Error(`no tooltip on the chart after ${tries} tries`);
    await page.mouse.move(0, 0);
  }
}

/**
 * Waits (5 s at most) until `target` has the focus: the console moves it in an effect, which runs
 * after the paint that shows the page, so a check made as soon as the page shows can come first.
 */
export async function untilFocused(target: Locator): Promise<void> {
  const element = await target.elementHandle();
  await target.page().waitForFunction((focused) => focused === document.activeElement, element, { timeout: 5_000 });
}
