/**
 * Which test files `npm run test:postgres` runs against PostgreSQL: every test file but the browser
 * tests (they stay on the SQLite run). Tests of SQLite itself run and skip themselves there, with
 * their reason (test/helpers/engine.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dir, '..');

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
  return allTestFiles().filter((file) => !isBrowserTest(readFileSync(path.join(REPO_ROOT, file), 'utf8')));
}
