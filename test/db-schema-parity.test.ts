// The PostgreSQL schema (src/storage/postgres/db/schema) is the twin of the SQLite one (src/storage/sqlite/db/schema): the
// same tables and columns under the same names, so that one set of queries can serve both engines.
// Read through drizzle's own table config, not from SQL.
import { describe, expect, test } from 'bun:test';
import { is, type Column } from 'drizzle-orm';
import { getTableConfig as pgTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as postgresSchema from '../src/storage/postgres/db/schema/index.ts';
import * as sqliteSchema from '../src/storage/sqlite/db/schema/index.ts';

/** What a column holds, in words both engines share. */
type Kind = 'text' | 'json' | 'integer' | 'boolean' | 'real' | 'blob';

const SQLITE_KINDS: Record<string, Kind> = {
  SQLiteText: 'text',
  SQLiteTextJson: 'json',
  SQLiteInteger: 'integer',
  SQLiteBoolean: 'boolean',
  SQLiteReal: 'real',
  SQLiteBlobBuffer: 'blob',
};

/** PostgreSQL types by kind; JSON is `text` through the jsonText custom type (src/storage/postgres/db/schema/columns.ts says why). */
function postgresKind(column: Column): Kind | string {
  const type = (column as Column & { getSQLType(): string }).getSQLType();
  if (column.columnType === 'PgCustomColumn') return type === 'text' ? 'json' : type === 'bytea' ? 'blob' : `custom ${type}`;
  return ({ text: 'text', bigint: 'integer', integer: 'integer', boolean: 'boolean', 'double precision': 'real' } as Record<string, Kind>)[type] ?? type;
}

type TableConfig = ReturnType<typeof sqliteTableConfig> | ReturnType<typeof pgTableConfig>;

/**
 * What only the PostgreSQL schema holds, each for a reason of the engine's own; nothing else may differ.
 * - The rollup tables: SQLite keeps them in a file of their own beside the database, outside its
 *   schema (src/storage/sqlite/db/rollups-file.ts), so its roller's large writes never hold the database's one write
 *   lock; PostgreSQL has no such lock and keeps them in the database.
 * - `scans.xact` and its index: the rollup watermark. SQLite's counts in the implicit rowid;
 *   PostgreSQL has none, and a sequence's values commit out of order, so its watermark is the id of
 *   the transaction that wrote the row (src/storage/postgres/scan-rollups.ts).
 */
const POSTGRES_ONLY = {
  tables: new Map([['scan_rollups', 'scanRollups'], ['scan_hostname_rollups', 'scanHostnameRollups'], ['scan_rollup_state', 'scanRollupState']]),
  columns: { scans: ['xact'] } as Record<string, string[]>,
  indexes: { scans: ['scans_xact_idx'] } as Record<string, string[]>,
};

/** A PostgreSQL table's shape without what only PostgreSQL holds (POSTGRES_ONLY). */
function withoutPostgresOnly(name: string, table: ReturnType<typeof shape>): ReturnType<typeof shape> {
  const columns = POSTGRES_ONLY.columns[name] ?? [];
  const indexes = POSTGRES_ONLY.indexes[name] ?? [];
  return {
    ...table,
    columns: Object.fromEntries(Object.entries(table.columns).filter(([column]) => !columns.includes(column))),
    indexes: Object.fromEntries(Object.entries(table.indexes).filter(([index]) => !indexes.includes(index))),
  };
}

/** A table as both engines can be compared on: every column's name, kind, nullability, key and default, its keys and indexes. */
function shape(config: TableConfig, kindOf: (column: Column) => string, tableName: (table: unknown) => string) {
  const names = (columns: readonly { name: string }[]) => columns.map((column) => column.name);
  return {
    columns: Object.fromEntries(
      config.columns.map((column) => [
        column.name,
        { kind: kindOf(column), notNull: column.notNull, primaryKey: column.primary, unique: column.isUnique, hasDefault: column.hasDefault },
      ]),
    ),
    compositePrimaryKeys: config.primaryKeys.map((key) => names(key.columns)),
    uniqueConstraints: config.uniqueConstraints.map((constraint) => names(constraint.columns)),
    indexes: Object.fromEntries(
      config.indexes.map(({ config: index }) => [
        index.name,
        { columns: index.columns.map((column) => (column as { name?: string }).name ?? 'expression'), unique: index.unique, partial: index.where !== undefined },
      ]),
    ),
    foreignKeys: config.foreignKeys
      .map((key) => {
        const reference = key.reference();
        const target = `${tableName(reference.foreignTable)}(${names(reference.foreignColumns)})`;
        return `(${names(reference.columns)}) -> ${target} on delete ${key.onDelete ?? 'no action'}, on update ${key.onUpdate ?? 'no action'}`;
      })
      .sort(),
  };
}

function sqliteTables() {
  const tables = Object.entries(sqliteSchema as Record<string, unknown>).filter((entry): entry is [string, SQLiteTable] => is(entry[1], SQLiteTable));
  return new Map(tables.map(([exportName, table]) => {
    const config = sqliteTableConfig(table);
    const kindOf = (column: Column) => SQLITE_KINDS[column.columnType] ?? column.columnType;
    return [config.name, { exportName, shape: shape(config, kindOf, (target) => sqliteTableConfig(target as SQLiteTable).name) }];
  }));
}

function postgresTables() {
  const tables = Object.entries(postgresSchema as Record<string, unknown>).filter((entry): entry is [string, PgTable] => is(entry[1], PgTable));
  return new Map(tables.map(([exportName, table]) => {
    const config = pgTableConfig(table);
    return [config.name, { exportName, shape: shape(config, postgresKind, (target) => pgTableConfig(target as PgTable).name) }];
  }));
}

describe('the PostgreSQL schema mirrors the SQLite schema', () => {
  const sqlite = sqliteTables();
  const postgres = postgresTables();

  test('both schemas hold the same tables, under the same export names, but the tables only PostgreSQL holds', () => {
    expect(sqlite.size).toBeGreaterThan(0);
    const exports = (tables: typeof sqlite) => Object.fromEntries([...tables].map(([name, table]) => [name, table.exportName]).sort());
    const shared = new Map([...postgres].filter(([name]) => !POSTGRES_ONLY.tables.has(name)));
    expect(exports(shared)).toEqual(exports(sqlite));
    // Each allowance is there: one that is no longer needed leaves the list.
    expect([...POSTGRES_ONLY.tables].filter(([name, exportName]) => postgres.get(name)?.exportName !== exportName || sqlite.has(name))).toEqual([]);
    for (const [name, columns] of Object.entries(POSTGRES_ONLY.columns)) for (const column of columns) expect(postgres.get(name)!.shape.columns[column]).toBeDefined();
    for (const [name, indexes] of Object.entries(POSTGRES_ONLY.indexes)) for (const index of indexes) expect(postgres.get(name)!.shape.indexes[index]).toBeDefined();
  });

  // One test per table, so a difference names its table; toEqual's diff names the column, key or index.
  for (const name of [...sqlite.keys()].sort()) {
    test(`${name}: same columns (kind, nullability, primary key, uniqueness, default), keys, indexes and foreign keys`, () => {
      const table = postgres.get(name);
      expect(table && withoutPostgresOnly(name, table.shape)).toEqual(sqlite.get(name)!.shape);
    });
  }
});
