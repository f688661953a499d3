import { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';
import type { TransactionSQL } from 'bun';
import type { AppDatabase } from '../sqlite/db/index.ts';
import { ROLLUP_FILE_VERSION, ROLLUPS, rollupsFileOf } from '../sqlite/db/rollups-file.ts';
import { migratePostgres } from './db/migrate.ts';
import { urlShown } from '../../lib/url-credentials.ts';
import { openPostgresClient, type PostgresClient } from './client.ts';
import { reachPostgres } from './reach.ts';
import { ROLLUP_TABLES } from './scan-rollups.ts';

/** PostgreSQL takes at most 65,535 parameters per statement; a batch stays under it. */
const MAX_PARAMETERS = 60_000;
/** Rows per INSERT at most, however few the columns. */
const MAX_BATCH_ROWS = 2_000;
/** A large table reports its progress every this many rows (and every table once it is copied). */
const PROGRESS_ROWS = 100_000;

/** The SQLite database cannot be moved as it is: the schemas differ, or the target is not empty. */
export class CopyRefusedError extends Error {
  override name = 'CopyRefusedError';
}

/** One table of the target, as PostgreSQL describes it. */
interface TargetTable {
  name: string;
  /** Column name → PostgreSQL data type. */
  columns: Map<string, string>;
  /** Identity columns, whose sequence must continue after the copied values. */
  identities: string[];
  /** Tables this one's foreign keys reference (copied first). */
  references: Set<string>;
}

export interface CopyReport {
  /** Rows copied per table, in the order they were copied; each equals the source's count. */
  tables: Record<string, number>;
  rows: number;
  /** NUL characters dropped from text values (PostgreSQL's text cannot hold U+0000; SQLite's can). */
  nulsDropped: number;
  /**
   * `copied`: the SQLite rollups held every copied scan, and came along (the dashboards are fast at
   * once); `refold`: they did not (missing, of another layout, or behind), and PostgreSQL's roller
   * folds every copied scan after the first start.
   */
  rollups: 'copied' | 'refold';
}

async function targetTables(sql: TransactionSQL): Promise<TargetTable[]> {
  const tables = new Map<string, TargetTable>();
  for (const row of await sql`SELECT table_name, column_name, data_type, is_identity FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`) {
    let table = tables.get(row.table_name);
    if (!table) tables.set(row.table_name, (table = { name: row.table_name, columns: new Map(), identities: [], references: new Set() }));
    table.columns.set(row.column_name, row.data_type);
    if (row.is_identity === 'YES') table.identities.push(row.column_name);
  }
  const references = await sql`
    SELECT DISTINCT tc.table_name AS from_table, ccu.table_name AS to_table
    FROM information_schema.table_constraints tc
    JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.constraint_schema = tc.constraint_schema
    WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = 'public'`;
  for (const { from_table, to_table } of references) if (from_table !== to_table) tables.get(from_table)?.references.add(to_table);
  return [...tables.values()];
}

/** The tables, each after those it references. */
function referencedFirst(tables: TargetTable[]): TargetTable[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: TargetTable[] = [];
  const placed = new Set<string>();
  const place = (table: TargetTable, path: string[]) => {
    if (placed.has(table.name)) return;
    if (path.includes(table.name)) throw new CopyRefusedError(`the foreign keys of ${[...path, table.name].join(' → ')} form a cycle`);
    for (const name of table.references) place(byName.get(name)!, [...path, table.name]);
    placed.add(table.name);
    ordered.push(table);
  };
  for (const table of [...tables].sort((a, b) => a.name.localeCompare(b.name))) place(table, []);
  return ordered;
}

/** SQLite's own tables and drizzle's migration record are not svc's state. */
const isStateTable = (name: string) => !name.startsWith('sqlite_') && name !== '__drizzle_migrations';

/**
 * Copies every table of svc's SQLite database into an empty, migrated PostgreSQL database, in one
 * PostgreSQL transaction, from one read snapshot of the SQLite file: either all of it arrives, with
 * each table's row count checked against the source's before the commit, or nothing does.
 * Columns the PostgreSQL schema has beyond SQLite's keep their defaults; identity sequences continue
 * after the copied values. The stats rollups are derived: with `rollupsFile` (the SQLite roller's
 * file) holding every scan of the snapshot, its cells come along and PostgreSQL's watermark is put
 * past the copying transaction (the copied scans carry its id); else PostgreSQL's roller folds every
 * copied scan from its watermark 0.
 */
export async function copySqliteToPostgres(
  source: Database,
  client: PostgresClient,
  progress: (table: string, rows: number) => void = () => {},
  rollupsFile: string | null = null,
): Promise<CopyReport> {
  const sourceTables = new Map(
    source
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .filter(({ name }) => isStateTable(name))
      .map(({ name }) => [name, source.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name}')`).all().map((column) => column.name)]),
  );
  const report: CopyReport = { tables: {}, rows: 0, nulsDropped: 0, rollups: 'refold' };
  const rollupsAttached = rollupsFile !== null && attachedRollups(source, rollupsFile);
  // One read transaction on SQLite: every table (the rollups file's too) as of one moment, whatever else writes meanwhile.
  source.exec('BEGIN');
  try {
    const rollups = rollupsAttached ? rollupsHoldingEveryScan(source) : null;
    await client.sql.begin(async (sql) => {
      // The rollup cells come along only when they hold every copied scan; the state row is PostgreSQL's own (its watermark counts transactions).
      const copiedRollups = rollups ? ROLLUP_TABLES.filter((name) => name !== 'scan_rollup_state') : [];
      for (const name of copiedRollups) sourceTables.set(name, source.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${name}', '${ROLLUPS}')`).all().map((column) => column.name));
      const tables = referencedFirst((await targetTables(sql)).filter((table) => !ROLLUP_TABLES.includes(table.name) || copiedRollups.includes(table.name)));
      const missing = [...sourceTables.keys()].filter((name) => !tables.some((table) => table.name === name));
      if (missing.length > 0) throw new CopyRefusedError(`the PostgreSQL schema lacks table(s) ${missing.join(', ')}: is it migrated by the same svc version?`);
      for (const table of tables) {
        const columns = sourceTables.get(table.name);
        if (!columns) throw new CopyRefusedError(`the SQLite database lacks table ${table.name}: migrate it with this svc first (svc migrate)`);
        const strange = columns.filter((column) => !table.columns.has(column));
        if (strange.length > 0) throw new CopyRefusedError(`table ${table.name}: the PostgreSQL schema lacks column(s) ${strange.join(', ')}`);
        const [{ any }] = await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM "${table.name}") AS any`);
        if (any) throw new CopyRefusedError(`the PostgreSQL database already holds rows in ${table.name}: migrate-to copies into an empty database only`);
      }
      for (const table of tables) {
        const columns = sourceTables.get(table.name)!;
        const copied = await copyTable(source, sql, table, columns, report, (rows) => progress(table.name, rows));
        const expected = source.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${table.name}"`).get()!.n;
        const [{ n }] = await sql.unsafe(`SELECT count(*)::bigint AS n FROM "${table.name}"`);
        if (copied !== expected || Number(n) !== expected) throw new Error(`table ${table.name}: ${expected} rows in SQLite, ${Number(n)} arrived; nothing was committed`);
        for (const column of table.identities) {
          await sql.unsafe(`SELECT setval(pg_get_serial_sequence('"${table.name}"', '${column}'), COALESCE(max("${column}"), 1), max("${column}") IS NOT NULL) FROM "${table.name}"`);
        }
        report.tables[table.name] = expected;
        report.rows += expected;
      }
      if (rollups) {
        // Every scan copied carries this transaction's id: the watermark past it says they are folded.
        await sql`UPDATE scan_rollup_state SET watermark = (pg_current_xact_id()::text)::bigint + 1, days_from = ${rollups.daysFrom}, months_from = ${rollups.monthsFrom} WHERE id = 1`;
        report.rollups = 'copied';
      }
    });
  } finally {
    source.exec('ROLLBACK');
    if (rollupsAttached) source.exec(`DETACH DATABASE ${ROLLUPS}`);
  }
  return report;
}

/** Attaches the SQLite roller's file to `source` when it is there and of this svc's layout; whether it did. */
function attachedRollups(source: Database, rollupsFile: string): boolean {
  if (!existsSync(rollupsFile)) return false;
  const probe = new Database(rollupsFile, { readonly: true });
  try {
    if (probe.query<{ user_version: number }, []>('PRAGMA user_version').get()!.user_version !== ROLLUP_FILE_VERSION) return false;
  } finally {
    probe.close();
  }
  source.prepare(`ATTACH DATABASE ? AS ${ROLLUPS}`).run(rollupsFile);
  return true;
}

/** The SQLite rollups' day and month bounds when they hold every scan of the snapshot (their watermark is the last scan's rowid), else null. */
function rollupsHoldingEveryScan(source: Database): { daysFrom: number; monthsFrom: number } | null {
  const state = source.query<{ watermark: number; days_from: number; months_from: number }, []>(`SELECT watermark, days_from, months_from FROM ${ROLLUPS}.scan_rollup_state WHERE id = 1`).get();
  const last = source.query<{ last: number | null }, []>('SELECT max(rowid) AS last FROM main.scans').get()!.last ?? 0;
  return state && state.watermark >= last ? { daysFrom: state.days_from, monthsFrom: state.months_from } : null;
}

/** Converts one SQLite value to what the PostgreSQL column of `type` takes. */
function converter(type: string, report: CopyReport): (value: unknown) => unknown {
  if (type === 'boolean') return (value) => (value === null ? null : value === 1 || value === true);
  if (type === 'text') {
    return (value) => {
      if (typeof value !== 'string' || !value.includes('\u0000')) return value;
      report.nulsDropped += value.split('\u0000').length - 1;
      return value.replaceAll('\u0000', '');
    };
  }
  return (value) => value;
}

/** Copies one table in multi-row INSERTs; returns how many rows it read. */
async function copyTable(source: Database, sql: TransactionSQL, table: TargetTable, columns: string[], report: CopyReport, progress: (rows: number) => void): Promise<number> {
  const convert = columns.map((column) => converter(table.columns.get(column)!, report));
  const batchRows = Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length)));
  const columnList = columns.map((column) => `"${column}"`).join(', ');
  const insert = (rows: unknown[][]) => {
    let n = 0;
    const values = rows.map((row) => `(${row.map(() => `$${++n}`).join(', ')})`).join(', ');
    return sql.unsafe(`INSERT INTO "${table.name}" (${columnList}) VALUES ${values}`, rows.flat());
  };
  let batch: unknown[][] = [];
  let copied = 0;
  let reported = 0;
  // Row by row (iterate), so memory holds one batch, whatever the table's size.
  for (const row of source.query<Record<string, unknown>, []>(`SELECT ${columnList} FROM "${table.name}"`).iterate()) {
    batch.push(columns.map((column, i) => convert[i]!(row[column])));
    if (batch.length === batchRows) {
      await insert(batch);
      copied += batch.length;
      batch = [];
      if (copied - reported >= PROGRESS_ROWS) progress((reported = copied));
    }
  }
  if (batch.length > 0) {
    await insert(batch);
    copied += batch.length;
  }
  if (copied !== reported || copied === 0) progress(copied);
  return copied;
}

/**
 * `svc migrate-to`: svc's SQLite database (open, migrated to this build) copied into the PostgreSQL
 * database of `settings`, which is reached and migrated first and must hold no rows.
 */
export async function moveToPostgres(database: AppDatabase, settings: { url: string }, progress?: (table: string, rows: number) => void): Promise<CopyReport & { to: string }> {
  await reachPostgres(settings.url);
  await migratePostgres(settings.url);
  const client = openPostgresClient(settings.url, { max: 1, applicationName: 'svc migrate-to' });
  try {
    const report = await copySqliteToPostgres(database.sqlite, client, progress, rollupsFileOf(database.file));
    // The planner's statistics of the tables just filled, now rather than when autovacuum gets to them: the first dashboards plan on them.
    await client.sql`ANALYZE`;
    return { to: urlShown(settings.url), ...report };
  } finally {
    await client.close();
  }
}
