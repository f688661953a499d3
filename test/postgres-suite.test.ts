import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allTestFiles, isBrowserTest, postgresSuite, REPO_ROOT } from '../scripts/postgres-suite.ts';

describe('the PostgreSQL run (npm run test:postgres)', () => {
  test("it runs every test file but the browser tests, the engines' own tests and the end-to-end ones included", () => {
    const suite = postgresSuite();
    const browser = allTestFiles().filter((file) => isBrowserTest(readFileSync(path.join(REPO_ROOT, file), 'utf8')));
    expect(browser).toContain('test/e2e/console-browser.test.ts');
    for (const file of ['test/storage/engines.test.ts', 'test/postgres/serve.test.ts', 'test/postgres-suite.test.ts', 'test/e2e/server.test.ts', 'test/scan-rollups.test.ts']) expect(suite).toContain(file);
    expect(suite.length + browser.length).toBe(allTestFiles().length);
  });
});
