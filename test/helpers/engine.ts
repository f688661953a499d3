// Which engine this test run composes svc on: SQLite (`npm test`), or PostgreSQL under
// `npm run test:postgres` (SVC_TEST_ENGINE=postgres). Test files not yet run on PostgreSQL are
// listed, each with its reason, in scripts/postgres-suite.ts; a test about SQLite itself says so
// with testSqliteOnly, with the reason, and is skipped (never silently) on PostgreSQL.
import { test } from 'bun:test';
import path from 'node:path';
import { createMigratedTestDatabase, POSTGRES_MODE } from './postgres.ts';

export { POSTGRES_MODE };

/** `test` for one test of SQLite itself; `reason` says why it has no PostgreSQL meaning. */
export function testSqliteOnly(reason: string, label: string, body: () => unknown, timeout?: number): void {
  if (POSTGRES_MODE) test.skip(`${label} (SQLite only: ${reason})`, body as () => void);
  else test(label, body as () => void, timeout);
}

const databases = new Map<string, Promise<string>>();

/**
 * On PostgreSQL, the database of a spawned svc's data directory: the server and the commands of one
 * test name the same data directory, so they share one database (created on first use, migrated).
 * `{}` on SQLite, where the data directory holds the database.
 */
export async function engineEnv(dataDir: string | undefined): Promise<Record<string, string>> {
  if (!POSTGRES_MODE || dataDir === undefined) return {};
  const key = path.resolve(dataDir);
  let url = databases.get(key);
  if (!url) {
    url = createMigratedTestDatabase().then((created) => created.url);
    databases.set(key, url);
  }
  return { SVC_DATABASE_URL: await url };
}
