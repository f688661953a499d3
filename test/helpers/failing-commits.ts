import type { Database } from 'bun:sqlite';
import type { TestApp } from './app.ts';

/**
 * Makes every COMMIT that inserted into `table` fail, after the INSERTs themselves succeeded: each
 * new row adds a deferred foreign-key violation, which SQLite checks only at COMMIT. Returns the undo.
 */
export function failCommits(sqlite: Database, table: string): () => void {
  sqlite.run('CREATE TABLE commit_gate_parent (id INTEGER PRIMARY KEY)');
  sqlite.run('CREATE TABLE commit_gate (parent INTEGER REFERENCES commit_gate_parent(id) DEFERRABLE INITIALLY DEFERRED)');
  sqlite.run(`CREATE TRIGGER commit_gate AFTER INSERT ON ${table} BEGIN INSERT INTO commit_gate VALUES (1); END`);
  return () => sqlite.run('DROP TRIGGER commit_gate');
}

/** Whether a test app runs on PostgreSQL (else SQLite). */
export const onPostgres = (t: TestApp) => t.config.postgres !== null;

/** A PostgreSQL trigger function named `name` whose body is `body` (plpgsql), for the triggers below. */
const triggerFunction = (name: string, body: string) => `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} END $$`;

/** `failCommits` on the test app's engine: every COMMIT that inserted into `table` fails (a deferred foreign key on both). Returns the undo. */
export async function failCommitsOf(t: TestApp, table: string): Promise<() => Promise<void>> {
  if (!onPostgres(t)) {
    const undo = failCommits(t.database.sqlite, table);
    return async () => undo();
  }
  await t.query('CREATE TABLE commit_gate_parent (id integer PRIMARY KEY)');
  await t.query('CREATE TABLE commit_gate (parent integer REFERENCES commit_gate_parent(id) DEFERRABLE INITIALLY DEFERRED)');
  await t.query(triggerFunction('commit_gate', 'INSERT INTO commit_gate VALUES (1); RETURN NULL;'));
  await t.query(`CREATE TRIGGER commit_gate AFTER INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION commit_gate()`);
  return async () => void (await t.query(`DROP TRIGGER commit_gate ON ${table}`));
}

/**
 * Makes every INSERT into `table` of a row for which `when` holds (SQL over NEW, alike on both
 * engines) fail with "planted failure" (as a full disk or a broken row would), on the test app's
 * engine: the statement fails, the transaction stays open. Returns the undo.
 */
export async function failInsertsWhen(t: TestApp, table: string, when: string): Promise<() => Promise<void>> {
  const name = `refuse_${crypto.randomUUID().slice(0, 8)}`;
  if (!onPostgres(t)) {
    t.database.sqlite.run(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} WHEN ${when} BEGIN SELECT RAISE(ABORT, 'planted failure'); END`);
    return async () => void t.database.sqlite.run(`DROP TRIGGER ${name}`);
  }
  await t.query(triggerFunction(name, "RAISE EXCEPTION 'planted failure';"));
  await t.query(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`);
  return async () => void (await t.query(`DROP TRIGGER ${name} ON ${table}`));
}

/** Makes every INSERT into `table` of a row for which `when` holds take several milliseconds more, on the test app's engine. */
export async function slowInsertsWhen(t: TestApp, table: string, when: string): Promise<void> {
  const name = `slow_${crypto.randomUUID().slice(0, 8)}`;
  if (!onPostgres(t)) {
    t.database.sqlite.run(
      `CREATE TRIGGER ${name} AFTER INSERT ON ${table} WHEN ${when} BEGIN SELECT sum(x) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT x FROM c); END`,
    );
    return;
  }
  await t.query(triggerFunction(name, 'PERFORM pg_sleep(0.005); RETURN NULL;'));
  await t.query(`CREATE TRIGGER ${name} AFTER INSERT ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`);
}

/** Makes every INSERT and UPDATE of `table` fail with `message`, on the test app's engine. Returns the undo. */
export async function failWritesTo(t: TestApp, table: string, message: string): Promise<() => Promise<void>> {
  const name = `refuse_${crypto.randomUUID().slice(0, 8)}`;
  if (!onPostgres(t)) {
    for (const write of ['INSERT', 'UPDATE']) t.database.sqlite.run(`CREATE TRIGGER ${name}_${write} BEFORE ${write} ON ${table} BEGIN SELECT RAISE(ABORT, '${message}'); END`);
    return async () => {
      for (const write of ['INSERT', 'UPDATE']) t.database.sqlite.run(`DROP TRIGGER ${name}_${write}`);
    };
  }
  await t.query(triggerFunction(name, `RAISE EXCEPTION '${message}';`));
  await t.query(`CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`);
  return async () => void (await t.query(`DROP TRIGGER ${name} ON ${table}`));
}
