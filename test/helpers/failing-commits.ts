import type { Database } from 'bun:sqlite';

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
