import { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';
import { integrityProblems } from './backup.ts';
import { SchemaTooNewError, checkSchema, type SchemaCheck } from './db/index.ts';
import type { SchemaDifference } from './db/schema-check.ts';

/** A check that could not run, and why (an earlier one failed). */
interface Skipped {
  ok: false;
  skipped: string;
}

/** What `svc doctor` checked in a database file, and what it found. */
export interface DoctorReport {
  database: string;
  /** Every check passed: svc can open it, and runs nothing in it that svc did not create. */
  ok: boolean;
  /** SQLite's `PRAGMA integrity_check`. */
  integrity: { ok: boolean; problems: string[] } | Skipped;
  /** Migrations the database records against those this binary carries (a newer database is refused). */
  schemaVersion: { ok: boolean; database: number; binary: number } | Skipped;
  /** Every table, index, view and trigger against what svc's migrations create at that version. */
  schema: { ok: boolean; objects: number; differences: SchemaDifference[] } | Skipped;
}

/**
 * Examines `file` read-only, without the data directory's lock: a running server's database or a
 * backup about to be restored. The same schema check refuses `svc serve`, `svc migrate` and `svc restore`.
 */
export function examineDatabase(file: string): DoctorReport {
  if (!existsSync(file)) throw new Error(`no database at ${file}`);
  const report = (parts: Omit<DoctorReport, 'database' | 'ok'>): DoctorReport => ({
    database: file,
    ok: parts.integrity.ok && parts.schemaVersion.ok && parts.schema.ok,
    ...parts,
  });
  const sqlite = new Database(file, { readonly: true });
  try {
    let problems: string[];
    try {
      problems = integrityProblems(sqlite);
    } catch (error) {
      problems = [`not an SQLite database: ${(error as Error).message}`];
    }
    const integrity = { ok: problems.length === 0, problems };
    if (!integrity.ok) {
      const skipped: Skipped = { ok: false, skipped: 'the file is damaged' };
      return report({ integrity, schemaVersion: skipped, schema: skipped });
    }
    let check: SchemaCheck;
    try {
      check = checkSchema(sqlite, file);
    } catch (error) {
      if (!(error instanceof SchemaTooNewError)) throw error;
      return report({
        integrity,
        schemaVersion: { ok: false, database: error.databaseVersion, binary: error.binaryVersion },
        schema: { ok: false, skipped: "the database is newer than this svc, which does not know that version's schema" },
      });
    }
    return report({
      integrity,
      schemaVersion: { ok: true, database: check.applied, binary: check.known },
      schema: { ok: check.differences.length === 0, objects: check.objects, differences: check.differences },
    });
  } finally {
    sqlite.close();
  }
}
