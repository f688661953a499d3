import { describe } from 'bun:test';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
