import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { migrate } from 'drizzle-orm/bun-sqlite/migrator';
import { checkSchema, migrateDatabase, MIGRATIONS_FOLDER, openDatabase, SchemaMismatchError, SchemaTooNewError } from '../src/storage/sqlite/db/index.ts';
import { normalizeSql, readSchema } from '../src/storage/sqlite/db/schema-check.ts';
import { tempDir } from './helpers/app.ts';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('svc-db-');
});
afterEach(() => tmp.remove());

describe('database', () => {
  test('opens in WAL mode with a busy timeout and foreign keys on, creating its directory', () => {
    const database = openDatabase(path.join(tmp.dir, 'nested', 'svc.db'));
    const pragma = (name: string) => Object.values(database.sqlite.query(`PRAGMA ${name}`).get() as object)[0];
    expect(pragma('journal_mode')).toBe('wal');
    expect(pragma('busy_timeout')).toBe(5000);
    expect(pragma('foreign_keys')).toBe(1);
    database.close();
  });

  test('migrations are idempotent across reopenings', () => {
    const file = path.join(tmp.dir, 'svc.db');
    const first = openDatabase(file);
    const applied = migrateDatabase(first);
    expect(applied.applied).toBeGreaterThan(0);
    first.sqlite.run("INSERT INTO leads (id, email, verified, created_at) VALUES ('l1', 'a@example.com', 0, 0)");
    first.close();
    const second = openDatabase(file);
    expect(migrateDatabase(second)).toEqual({ applied: 0, total: applied.total });
    expect(second.sqlite.query('SELECT count(*) AS n FROM leads').get()).toEqual({ n: 1 });
    second.close();
  });

  test('a database holding a migration this binary does not know is refused, even with no more migrations than it has', () => {
    // Another line of development (or a newer svc that also dropped one) left a migration this
    // binary never had in place of one it knows: the count matches, the newest does not.
    const file = path.join(tmp.dir, 'svc.db');
    const first = openDatabase(file);
    const { total } = migrateDatabase(first);
    const latest = first.sqlite.query<{ id: number; created_at: number }, []>('SELECT rowid AS id, created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1').get()!;
    first.sqlite.run('UPDATE __drizzle_migrations SET hash = ?, created_at = ? WHERE rowid = ?', ['unknown', latest.created_at + 1000, latest.id]);
    first.close();
    const second = openDatabase(file);
    expect(() => migrateDatabase(second)).toThrow(SchemaTooNewError);
    expect(second.sqlite.query('SELECT count(*) AS n FROM __drizzle_migrations').get()).toEqual({ n: total });
    second.close();
  });
});

const JOURNAL = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };

/** A database as the release with the first `version` migrations left it, made by drizzle's own migrate() from a copy of drizzle/ that stops there. */
function databaseAt(version: number, name = `v${version}`) {
  const folder = path.join(tmp.dir, `migrations-${version}`);
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  writeFileSync(path.join(folder, 'meta', '_journal.json'), JSON.stringify({ ...JOURNAL, entries: JOURNAL.entries.slice(0, version) }));
  const database = openDatabase(path.join(tmp.dir, `${name}.db`));
  migrate(database.db, { migrationsFolder: folder });
  return database;
}

/** The differences migrateDatabase refuses `database` for (it must refuse), without their wording. */
function refusal(database: ReturnType<typeof openDatabase>) {
  try {
    migrateDatabase(database);
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaMismatchError);
    return (error as SchemaMismatchError).differences;
  }
  throw new Error('migrateDatabase accepted the database');
}

describe("svc's schema and nothing else (issue 27 item 4)", () => {
  test('a database at every version of svc, and one never migrated, has svc\'s schema and migrates', () => {
    const fresh = openDatabase(path.join(tmp.dir, 'fresh.db'));
    expect(checkSchema(fresh.sqlite, fresh.file)).toEqual({ applied: 0, known: JOURNAL.entries.length, objects: 0, differences: [] });
    fresh.close();
    for (let version = 0; version <= JOURNAL.entries.length; version++) {
      const database = databaseAt(version);
      expect(checkSchema(database.sqlite, database.file).differences, `version ${version}`).toEqual([]);
      expect(migrateDatabase(database), `version ${version}`).toEqual({ applied: JOURNAL.entries.length - version, total: JOURNAL.entries.length });
      database.close();
    }
  }, 30_000);

  const latest = JOURNAL.entries.length;
  const cases: { what: string; sql: string[]; differences: object[] }[] = [
    {
      what: 'an extra view',
      sql: ['CREATE VIEW admin_keys AS SELECT id FROM api_keys'],
      differences: [{ kind: 'unexpected', type: 'view', name: 'admin_keys', table: 'admin_keys', problem: "view admin_keys is not created by svc's migrations" }],
    },
    {
      what: 'an extra table',
      sql: ['CREATE TABLE notes (body TEXT)'],
      differences: [{ kind: 'unexpected', type: 'table', name: 'notes', table: 'notes', problem: "table notes is not created by svc's migrations" }],
    },
    {
      what: 'an extra index',
      sql: ['CREATE INDEX leads_verified_idx ON leads (verified)'],
      differences: [{ kind: 'unexpected', type: 'index', name: 'leads_verified_idx', table: 'leads', problem: "index leads_verified_idx on leads is not created by svc's migrations" }],
    },
    {
      what: "an extra column computed by an expression in one of svc's tables",
      sql: ['ALTER TABLE api_keys ADD COLUMN shown TEXT GENERATED ALWAYS AS (upper(name)) VIRTUAL'],
      differences: [{ kind: 'changed', type: 'table', name: 'api_keys', table: 'api_keys', problem: "table api_keys is not defined as svc's migrations define it" }],
    },
    {
      what: "an extra column with a default in one of svc's tables",
      sql: ["ALTER TABLE api_keys ADD COLUMN scope_override TEXT DEFAULT '[\"admin\"]'"],
      differences: [{ kind: 'changed', type: 'table', name: 'api_keys', table: 'api_keys', problem: "table api_keys is not defined as svc's migrations define it" }],
    },
    {
      what: "one of svc's indexes over other columns",
      sql: ['DROP INDEX leads_created_idx', 'CREATE INDEX `leads_created_idx` ON `leads` (`email`)'],
      differences: [{ kind: 'changed', type: 'index', name: 'leads_created_idx', table: 'leads', problem: "index leads_created_idx on leads is not defined as svc's migrations define it" }],
    },
    {
      what: "a trigger under the name of one of svc's indexes",
      sql: ['DROP INDEX leads_created_idx', 'CREATE TRIGGER leads_created_idx AFTER INSERT ON leads BEGIN SELECT 1; END'],
      differences: [
        { kind: 'changed', type: 'trigger', name: 'leads_created_idx', table: 'leads', problem: "trigger leads_created_idx on leads is where svc's migrations create index leads_created_idx on leads" },
      ],
    },
    {
      what: "one of svc's indexes missing",
      sql: ['DROP INDEX leads_created_idx'],
      differences: [{ kind: 'missing', type: 'index', name: 'leads_created_idx', table: 'leads', problem: 'index leads_created_idx on leads is missing' }],
    },
    {
      what: "SQLite's statistics tables (ANALYZE)",
      sql: ['ANALYZE'],
      differences: [{ kind: 'unexpected', type: 'table', name: 'sqlite_stat1', table: 'sqlite_stat1', problem: "table sqlite_stat1 is not created by svc's migrations" }],
    },
  ];
  for (const { what, sql, differences } of cases) {
    test(`a database with ${what} is refused, naming it, and not migrated`, () => {
      const database = databaseAt(latest - 1);
      for (const statement of sql) database.sqlite.run(statement);
      expect(refusal(database)).toEqual(differences as never);
      expect(database.sqlite.query('SELECT count(*) AS n FROM __drizzle_migrations').get()).toEqual({ n: latest - 1 });
      database.close();
    });
  }

  test('a trigger on any of svc\'s tables is refused, naming it', () => {
    const database = databaseAt(latest);
    const tables = readSchema(database.sqlite).filter((object) => object.type === 'table').map((object) => object.name);
    expect(tables).toContain('leads');
    for (const table of tables) database.sqlite.run(`CREATE TRIGGER planted_${table} BEFORE DELETE ON ${table} BEGIN SELECT 1; END`);
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(refusal(database).map(({ kind, type, name, table }) => ({ kind, type, name, table })).sort(byName)).toEqual(
      tables.map((table) => ({ kind: 'unexpected' as const, type: 'trigger', name: `planted_${table}`, table })).sort(byName),
    );
    database.close();
  });

  test("drizzle's migrations table is defined as in the databases svc already made (a drizzle upgrade that changed it would have them all refused)", () => {
    const database = databaseAt(0);
    const table = readSchema(database.sqlite).find((object) => object.name === '__drizzle_migrations');
    expect(normalizeSql(table?.sql ?? null)).toBe(normalizeSql('CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)'));
    database.close();
  });

  test('a definition is compared token by token: whitespace, comments, quoting and the case of names and keywords aside', () => {
    const svc = 'CREATE TABLE `stores` (\n\t`id` text PRIMARY KEY NOT NULL,\n\t`settings` text DEFAULT \'{}\' NOT NULL\n)';
    for (const same of [
      "CREATE TABLE \"stores\" (\"id\" TEXT primary key not null, [settings] text default '{}' NOT NULL)",
      "CREATE TABLE `STORES` ( -- a comment\n `Id` text PRIMARY KEY NOT NULL, /* another */ `settings` text DEFAULT '{}' NOT NULL )",
    ]) {
      expect(normalizeSql(same), same).toBe(normalizeSql(svc));
    }
    for (const other of [
      "CREATE TABLE `stores` (`id` text PRIMARY KEY NOT NULL, `settings` text DEFAULT '{\"x\":1}' NOT NULL)",
      "CREATE TABLE `stores` (`id` text PRIMARY KEY NOT NULL, `settings` text DEFAULT '{}' NOT NULL, `note` text)",
      "CREATE TABLE `stores` (`id` text PRIMARY KEY NOT NULL, `settings` text DEFAULT '{}' \"NOT\" \"NULL\")",
      "CREATE TABLE `stores` (`id` text PRIMARY KEY NOT NULL, `settings` text DEFAULT '{}' NULL)",
    ]) {
      expect(normalizeSql(other), other).not.toBe(normalizeSql(svc));
    }
    expect(normalizeSql("DEFAULT 'pending'")).not.toBe(normalizeSql("DEFAULT 'PENDING'"));
    expect(normalizeSql(null)).toBeNull();
  });
});
