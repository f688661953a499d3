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
  'test/rollup-backlog.test.ts': '5 failing: drives the SQLite roller (t.rollups); inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-retention.test.ts': '7 failing: drives the SQLite roller (t.rollups); inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-rollups.test.ts': '13 failing: drives the SQLite roller (t.rollups); inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-writer.test.ts': '5 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam; opens the SQLite file beside a PostgreSQL server',
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
