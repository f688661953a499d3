// Tests that need a PostgreSQL server read its URL from SVC_TEST_DATABASE_URL, which
// `npm run test:postgres` sets to a throwaway server (scripts/test-postgres.ts). Without it (`npm test`)
// they are skipped.
import { describe } from 'bun:test';
import { SQL } from 'bun';

/** A URL whose user may create databases; each test makes its own database from it. */
export const TEST_DATABASE_URL = process.env.SVC_TEST_DATABASE_URL;

/** `describe` for tests that need PostgreSQL: skipped when SVC_TEST_DATABASE_URL is unset. */
export const describePostgres = describe.skipIf(!TEST_DATABASE_URL);

export interface TestDatabase {
  /** The new, empty database's URL (same server and user). */
  url: string;
  /** Drops it, ending any session still connected to it. */
  drop(): Promise<void>;
}

async function asAdmin(statement: string): Promise<void> {
  const admin = new SQL({ url: TEST_DATABASE_URL!, max: 1 });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.close();
  }
}

/** A new empty database for one test, as a new SQLite file is for the SQLite tests. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) throw new Error('SVC_TEST_DATABASE_URL is not set: run PostgreSQL tests with npm run test:postgres');
  const name = `svc_test_${crypto.randomUUID().replaceAll('-', '')}`;
  await asAdmin(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => asAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
