import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { allTestFiles, isBrowserTest, NOT_YET_ON_POSTGRES, postgresSuite, REPO_ROOT } from '../scripts/postgres-suite.ts';

/** The length of NOT_YET_ON_POSTGRES: it may only go down (lower it as files are converted). */
const MOST_NOT_YET = 6;

describe('the PostgreSQL run (npm run test:postgres)', () => {
  test('the list of files not yet on PostgreSQL only shrinks', () => {
    expect(Object.keys(NOT_YET_ON_POSTGRES).length).toBeLessThanOrEqual(MOST_NOT_YET);
  });

  test('every file not yet on PostgreSQL exists, is no browser test, and says why', () => {
    for (const [file, why] of Object.entries(NOT_YET_ON_POSTGRES)) {
      expect(existsSync(path.join(REPO_ROOT, file)), file).toBe(true);
      expect(isBrowserTest(readFileSync(path.join(REPO_ROOT, file), 'utf8')), file).toBe(false);
      expect(why.length, file).toBeGreaterThan(10);
    }
  });

  test('it runs every test file but the browser tests and the listed ones, the engines\' own tests included', () => {
    const suite = postgresSuite();
    const browser = allTestFiles().filter((file) => isBrowserTest(readFileSync(path.join(REPO_ROOT, file), 'utf8')));
    expect(browser).toContain('test/e2e/console-browser.test.ts');
    expect(suite).toContain('test/storage/engines.test.ts');
    expect(suite).toContain('test/postgres/serve.test.ts');
    expect(suite).toContain('test/postgres-suite.test.ts');
    expect(suite.length + browser.length + Object.keys(NOT_YET_ON_POSTGRES).length).toBe(allTestFiles().length);
  });
});
