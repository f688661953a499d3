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
  return { url: url.toString(), drop: () => dropSoon(name) };
}

/**
 * Whether this run composes the test apps on PostgreSQL (`npm run test:postgres` sets
 * SVC_TEST_ENGINE=postgres beside SVC_TEST_DATABASE_URL; tests of SQLite itself then skip: ./engine.ts).
 */
export const POSTGRES_MODE = process.env.SVC_TEST_ENGINE === 'postgres' && !!TEST_DATABASE_URL;

let template: Promise<string> | null = null;

/** A database migrated once per test process, that each migrated test database is copied from (copying is much faster than migrating). */
function migratedTemplate(): Promise<string> {
  return (template ??= (async () => {
    const { migratePostgres } = await import('../../src/storage/postgres/db/migrate.ts');
    const name = `svc_template_${crypto.randomUUID().replaceAll('-', '')}`;
    await asAdmin(`CREATE DATABASE ${name}`);
    const url = new URL(TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    await migratePostgres(url.toString());
    return name;
  })());
}

/** A new database holding svc's migrated, empty schema (a copy of the migrated template). */
export async function createMigratedTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) throw new Error('SVC_TEST_DATABASE_URL is not set: run PostgreSQL tests with npm run test:postgres');
  const from = await migratedTemplate();
  const name = `svc_test_${crypto.randomUUID().replaceAll('-', '')}`;
  await asAdmin(`CREATE DATABASE ${name} TEMPLATE ${from}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropSoon(name) };
}

/**
 * Drops a test app's database. FORCE may not end an autovacuum worker that just started in it (only
 * a superuser may): it is retried, and left to the throwaway server's removal when it still fails.
 */
async function dropSoon(name: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await asAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } catch {
      await Bun.sleep(100);
    }
  }
}
