import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { migrateDatabase, openDatabase, SchemaTooNewError } from '../src/db/index.ts';
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
