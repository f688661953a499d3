import { afterEach, beforeEach, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { is } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/bun-sql';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { MIGRATION_LOCK_KEY, migratePostgres, POSTGRES_MIGRATIONS_FOLDER } from '../../src/storage/postgres/db/migrate.ts';
import * as schema from '../../src/storage/postgres/db/schema/index.ts';
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.ts';

const MIGRATIONS = readMigrationFiles({ migrationsFolder: POSTGRES_MIGRATIONS_FOLDER }).length;

describePostgres('PostgreSQL migrations', () => {
  let database: TestDatabase;
  let client: SQL;
  beforeEach(async () => {
    database = await createTestDatabase();
    client = new SQL(database.url);
  });
  afterEach(async () => {
    await client.close();
    await database.drop();
  });

  const recorded = async () => Number((await client`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)[0].n);

  test('an empty database gets every migration, and then holds every table and column of the PostgreSQL schema', async () => {
    expect(MIGRATIONS).toBeGreaterThan(0);
    expect(await migratePostgres(database.url)).toEqual({ applied: MIGRATIONS, total: MIGRATIONS });
    const rows = await client`SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`;
    const actual: Record<string, Record<string, string>> = {};
    for (const row of rows) (actual[row.table_name] ??= {})[row.column_name] = `${row.data_type}${row.is_nullable === 'NO' ? ' not null' : ''}`;
    const expected: Record<string, Record<string, string>> = {};
    for (const table of Object.values(schema).filter((value) => is(value, PgTable))) {
      const config = getTableConfig(table as PgTable);
      expected[config.name] = Object.fromEntries(config.columns.map((column) => [column.name, `${column.getSQLType()}${column.notNull ? ' not null' : ''}`]));
    }
    // Generated migrations that lag behind an edited schema (npm run db:generate:pg forgotten) show here.
    expect(actual).toEqual(expected);
  });

  test('migrating a migrated database applies nothing', async () => {
    await migratePostgres(database.url);
    expect(await migratePostgres(database.url)).toEqual({ applied: 0, total: MIGRATIONS });
    expect(await recorded()).toBe(MIGRATIONS);
  });

  test('instances migrating one database at once all succeed, one of them migrates, and the schema is created once', async () => {
    const results = await Promise.all([migratePostgres(database.url), migratePostgres(database.url), migratePostgres(database.url)]);
    expect(results.map((result) => result.applied).sort()).toEqual([0, 0, MIGRATIONS]);
    expect(results.every((result) => result.total === MIGRATIONS)).toBe(true);
    expect(await recorded()).toBe(MIGRATIONS);
  });

  test('the migration lock is not held once migrating has ended, nor after a failed migration', async () => {
    const lockIsFree = async () => {
      const session = await client.reserve();
      try {
        const [row] = await session`SELECT pg_try_advisory_lock(${MIGRATION_LOCK_KEY}::bigint) AS taken`;
        if (row.taken) await session`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`;
        return row.taken as boolean;
      } finally {
        await session.release();
      }
    };
    await migratePostgres(database.url);
    expect(await lockIsFree()).toBe(true);
    await expect(migratePostgres(database.url, '/nonexistent/drizzle-pg')).rejects.toThrow(/journal/);
    expect(await lockIsFree()).toBe(true);
  });

  test('the column kinds round-trip through drizzle and Bun: JSON as written, bytes, epoch ms past 2^31, booleans, doubles', async () => {
    await migratePostgres(database.url);
    const db = drizzle({ client, schema });
    // Key order kept and a NUL inside a string (JSON.stringify writes \u0000, which jsonb refuses).
    const signals = { title: { value: 'Caf\u00e9 \u0000 \ud83c\udf89' }, b: 1, a: [true, null] };
    const scan = {
      id: 's1', hostname: 'shop.example.com', url: 'https://shop.example.com/', scannedAt: 1_790_000_000_123, receivedAt: 1_790_000_000_456,
      platformConfidence: 0.125, grade: 'B', percentage: 71.5, svcDetected: false, hasTitle: true, signals, quality: {}, data: { z: 0, y: 'x' }, trust: 2,
    };
    await db.insert(schema.scans).values(scan);
    const [stored] = await db.select().from(schema.scans);
    expect(stored).toMatchObject(scan);
    expect(JSON.stringify(stored!.signals)).toBe(JSON.stringify(signals));
    expect(stored!.hasDescription).toBeNull();
    const [{ text }] = await client`SELECT data AS text FROM scans`;
    expect(text).toBe('{"z":0,"y":"x"}');

    const bytes = Buffer.from([0, 1, 0x7f, 0x80, 0xff]);
    const [{ echoed }] = await client`SELECT ${bytes}::bytea AS echoed`;
    expect(Buffer.isBuffer(echoed)).toBe(true);
    expect(Buffer.compare(echoed, bytes)).toBe(0);
  });
});
