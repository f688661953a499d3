// svc runs nothing in its PostgreSQL database that it did not create (as in a SQLite file, issue 27
// item 4): a trigger or rule on its tables, or a trigger function whose body is not its own, refuses
// migrate and serve before svc writes anything (src/storage/postgres/db/code-check.ts).
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { migrationsCode } from '../../src/storage/postgres/db/code-check.ts';
import { migrationTags, POSTGRES_MIGRATIONS_FOLDER } from '../../src/storage/postgres/db/migrate.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/app.ts';
import { createTestDatabase, describePostgres, type TestDatabase } from '../helpers/postgres.ts';

describePostgres('svc runs no code in its PostgreSQL database that its migrations did not create', () => {
  let database: TestDatabase;
  let sql: SQL;
  beforeEach(async () => {
    database = await createTestDatabase();
    expect((await runCli(['migrate', '--database-url', database.url])).code).toBe(0);
    sql = new SQL({ url: database.url, max: 1 });
    // What planted code would leave behind if it ran.
    await sql`CREATE TABLE witness (what text)`;
    await sql`CREATE FUNCTION planted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO witness VALUES (TG_TABLE_NAME); RETURN NULL; END $$`;
  });
  afterEach(async () => {
    await sql.close();
    await database.drop();
  });

  /** `svc migrate` on the database: refused with one line naming `named`, exit 1, and the planted code never ran. */
  async function expectRefused(named: string) {
    const migrations = Number((await sql`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)[0].n);
    const refused = await runCli(['migrate', '--database-url', database.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^svc: the PostgreSQL database runs code svc did not create: .+\. Refused before svc wrote anything/)]);
    expect(refused.stderr).toContain(named);
    expect(Number((await sql`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)[0].n)).toBe(migrations);
    expect(await sql`SELECT * FROM witness`).toEqual([]);
  }

  test('the check knows every table of a migrated database, and every trigger on them as svc\'s own', async () => {
    const applied = Number((await sql`SELECT count(*) AS n FROM drizzle.__drizzle_migrations`)[0].n);
    const known = migrationsCode(POSTGRES_MIGRATIONS_FOLDER, migrationTags(POSTGRES_MIGRATIONS_FOLDER).slice(0, applied));
    const tables = (await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> 'witness' ORDER BY 1`).map((row: { table_name: string }) => row.table_name);
    expect([...known.tables].sort()).toEqual(tables);
    const triggers = (await sql`SELECT c.relname || '.' || t.tgname AS trigger FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal ORDER BY 1`).map((row: { trigger: string }) => row.trigger);
    expect([...known.triggers].sort()).toEqual(triggers);
  });

  test('a trigger on any of its tables (the newest migration\'s included) refuses migrate with one line naming it; nothing ran', async () => {
    for (const table of ['scans', 'api_keys', 'hook_ping_windows']) {
      await sql.unsafe(`CREATE TRIGGER planted_${table} AFTER INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION planted()`);
      await expectRefused(`trigger "planted_${table}" on "${table}"`);
      await sql.unsafe(`DROP TRIGGER planted_${table} ON ${table}`);
    }
    expect((await runCli(['migrate', '--database-url', database.url])).code).toBe(0);
  });

  test('a trigger on drizzle\'s migrations table, which svc writes while it migrates, refuses it', async () => {
    await sql`CREATE TRIGGER planted_migrations AFTER INSERT ON drizzle.__drizzle_migrations FOR EACH ROW EXECUTE FUNCTION planted()`;
    await expectRefused('trigger "planted_migrations" on "__drizzle_migrations"');
  });

  test('a rule on one of its tables refuses it', async () => {
    await sql`CREATE RULE planted_rule AS ON INSERT TO leads DO ALSO INSERT INTO witness VALUES ('leads')`;
    await expectRefused('rule "planted_rule" on "leads"');
  });

  test('svc\'s own trigger calling a function whose body was replaced refuses it', async () => {
    await sql`CREATE OR REPLACE FUNCTION svc_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO witness VALUES (TG_TABLE_NAME); RETURN NULL; END $$`;
    await expectRefused('calls svc_notify_change(), whose body is not svc\'s');
  });

  test('svc\'s own trigger missing refuses it (another instance would not hear of the table\'s writes)', async () => {
    await sql`DROP TRIGGER stores_changes ON stores`;
    await expectRefused('svc\'s trigger "stores_changes" on "stores" is missing');
  });

  test('serve is refused the same way, with one line and exit 1', async () => {
    await sql`CREATE TRIGGER planted_keys AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION planted()`;
    const dir = tempDir('svc-pg-code-');
    try {
      const refused = await runCli(['serve', '--http', '127.0.0.1:0', '--data-dir', dir.dir, '--database-url', database.url], { timeoutMs: 20_000 });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('trigger "planted_keys" on "api_keys"')]);
    } finally {
      dir.remove();
    }
  });

  test('triggers and rules on tables that are not svc\'s (another application sharing the database) are left alone', async () => {
    await sql`CREATE TRIGGER planted_witness AFTER INSERT ON witness FOR EACH ROW EXECUTE FUNCTION planted()`;
    await sql`CREATE TABLE other_app (id int)`;
    await sql`CREATE RULE other_rule AS ON INSERT TO other_app DO ALSO NOTHING`;
    const migrated = await runCli(['migrate', '--database-url', database.url]);
    expect([migrated.code, migrated.stderr]).toEqual([0, '']);
  });
});
