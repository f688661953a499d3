/**
 * Which test files `npm run test:postgres` runs against PostgreSQL: every test file but the browser
 * tests (they stay on the SQLite run) and those in NOT_YET_ON_POSTGRES, which is a list that only
 * shrinks (test/postgres-suite.test.ts holds it to its length). Tests of SQLite itself are not
 * listed: they run and skip themselves, with their reason (test/helpers/engine.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dir, '..');

/** Test files that do not pass on PostgreSQL yet, with how many of their tests fail there and why: convert one, take it off the list. */
export const NOT_YET_ON_POSTGRES: Record<string, string> = {
  'test/e2e/binary.test.ts': '2 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/instance.test.ts': '3 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/outbound-shutdown.test.ts': '1 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/restore.test.ts': '6 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/server.test.ts': '1 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/sync-crash.test.ts': '1 failing: opens the SQLite file beside a PostgreSQL server',
};


/** A browser test (Chromium through playwright): on the SQLite run only. */
export const isBrowserTest = (text: string) => /helpers\/browser\.ts'|from 'playwright-core'/.test(text);

/** Every test file under test/, relative to the repository, sorted. */
export function allTestFiles(): string[] {
  return readdirSync(path.join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.join('test', file))
    .sort();
}

/** The files the PostgreSQL run runs. */
export function postgresSuite(): string[] {
  return allTestFiles().filter((file) => !(file in NOT_YET_ON_POSTGRES) && !isBrowserTest(readFileSync(path.join(REPO_ROOT, file), 'utf8')));
}
