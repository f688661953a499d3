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
  'test/access-waits.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/auth-cache.test.ts': '3 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam; opens the SQLite file beside a PostgreSQL server',
  'test/auth-primitives.test.ts': '2 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/console-session.test.ts': '3 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/dashboard-workers.test.ts': '2 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/dashboard.test.ts': '1 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/e2e/binary.test.ts': '2 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/cli.test.ts': '6 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/instance.test.ts': '3 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/outbound-shutdown.test.ts': '1 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/request-log.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/restore.test.ts': '6 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/revocation.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/server.test.ts': '1 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/signals-server.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/stores-cli.test.ts': '4 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/sync-crash.test.ts': '1 failing: opens the SQLite file beside a PostgreSQL server',
  'test/e2e/telemetry-crash.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/webhooks-crash.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/e2e/webhooks-server.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/geo.test.ts': '9 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/health.test.ts': '4 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/job-runner.test.ts': '5 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/lead-email.test.ts': '1 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/metrics.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/platform-misbehaviour.test.ts': '5 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/private-targets.test.ts': '3 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/ratelimit-redis.test.ts': '1 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/request-log.test.ts': '1 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/rollup-backlog.test.ts': '5 failing: drives the SQLite roller (t.rollups); inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-bulk.test.ts': '18 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-retention.test.ts': '7 failing: drives the SQLite roller (t.rollups); inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-rollups.test.ts': '13 failing: drives the SQLite roller (t.rollups); inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/scan-writer.test.ts': '5 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam; opens the SQLite file beside a PostgreSQL server',
  'test/store-removal.test.ts': '14 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/stores-admin.test.ts': '5 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/sync-entries.test.ts': '7 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/sync-pause.test.ts': '2 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/sync-platform-a.test.ts': '4 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/sync-platforms-b-c.test.ts': '5 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/sync-reconcile.test.ts': '2 failing: fails on PostgreSQL: behaviour differences to investigate',
  'test/telemetry-auth.test.ts': '10 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/telemetry-payload.test.ts': '34 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/web-pages.test.ts': '2 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/webhooks-platform-a.test.ts': '57 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/webhooks-platform-b.test.ts': '33 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
  'test/webhooks-platform-c.test.ts': '36 failing: inspects or seeds rows through t.database (SQLite): move to t.query or the seam',
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
