import { Database } from 'bun:sqlite';
import { drizzle } from 'drizzle-orm/bun-sqlite';
import type { MigrationConfig, MigrationMeta } from 'drizzle-orm/migrator';

/**
 * One row of `sqlite_master`: what SQLite parses, and runs (triggers, views, defaults, checks,
 * generated columns, index expressions), once the file is open. `sql` is null for the indexes SQLite
 * makes itself for PRIMARY KEY and UNIQUE constraints (`sqlite_autoindex_*`).
 */
export interface SchemaObject {
  type: string;
  name: string;
  table: string;
  sql: string | null;
}

/** How an object of the database differs from svc's schema at the database's version. */
export interface SchemaDifference {
  /** `unexpected`: svc's migrations do not create it; `missing`: they do and the database lacks it; `changed`: same name, another definition. */
  kind: 'unexpected' | 'missing' | 'changed';
  type: string;
  name: string;
  table: string;
  /** The difference in words, naming the object. */
  problem: string;
}

/** Every object of the database's main schema (temporary objects live per connection, never in the file). */
export function readSchema(sqlite: Database): SchemaObject[] {
  return sqlite.query<SchemaObject, []>('SELECT type, name, tbl_name AS "table", sql FROM main.sqlite_master ORDER BY name').all();
}

/** One lexeme of SQL: whitespace, a comment, a string literal, a quoted identifier, a word, or any other single character. */
const LEXEME = /\s+|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]|[A-Za-z0-9_$\u0080-\uffff]+|[\s\S]/g;
const asciiLower = (text: string) => text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());

/**
 * A definition as the list of its lexemes, for comparing. Whitespace, comments, the quoting style of
 * identifiers (`x`, "x", [x]) and the case of keywords and identifiers (SQLite ignores ASCII case in
 * both) do not change what a definition does, and differ by who wrote it: drizzle's migration table
 * is created from an indented template, SQLite rewrites definitions on ALTER TABLE. Everything else
 * is kept: string literals as written, and a quoted identifier apart from a bare word (`"not"` is a
 * name where `not` is an operator).
 */
export function normalizeSql(sql: string | null): string | null {
  if (sql === null) return null;
  const lexemes: string[] = [];
  for (const [lexeme] of sql.matchAll(LEXEME)) {
    const first = lexeme[0]!;
    if (/\s/.test(first) || lexeme.startsWith('--') || lexeme.startsWith('/*')) continue;
    if (first === "'") lexemes.push(lexeme);
    else if ((first === '"' || first === '`' || first === '[') && lexeme.length > 1) {
      const close = first === '[' ? ']' : first;
      const name = lexeme.slice(1, -1).replaceAll(close + close, close);
      lexemes.push(`"${asciiLower(name).replaceAll('"', '""')}"`);
    } else lexemes.push(asciiLower(lexeme));
  }
  return JSON.stringify(lexemes);
}

/** Drizzle's migrator as `migrate()` runs it, over a list of migrations of our choosing. */
interface Migrator {
  dialect: { migrate(migrations: MigrationMeta[], session: unknown, config: MigrationConfig): void };
  session: unknown;
}

const migratedSchemas = new Map<number, SchemaObject[]>();

/**
 * The schema that the first `migrations.length` of svc's migrations create, made the way they were
 * made for a real database: drizzle's migrator on a fresh in-memory database. Computed once per
 * version and process (a few ms).
 */
export function migratedSchema(migrations: MigrationMeta[], config: MigrationConfig): SchemaObject[] {
  const cached = migratedSchemas.get(migrations.length);
  if (cached) return cached;
  const sqlite = new Database(':memory:');
  try {
    // migrate() reads the whole folder; the schema of an older version needs its first N migrations.
    const db = drizzle({ client: sqlite }) as unknown as Migrator;
    db.dialect.migrate(migrations, db.session, config);
    const schema = readSchema(sqlite);
    migratedSchemas.set(migrations.length, schema);
    return schema;
  } finally {
    sqlite.close();
  }
}

/** `trigger x on leads`; a table or view is its own `table`. */
const describe = (object: SchemaObject) => `${object.type} ${object.name}${object.table === object.name ? '' : ` on ${object.table}`}`;

/** What differs between `actual` and `expected`, by name (names are unique across a schema's objects of every type). */
export function schemaDifferences(actual: SchemaObject[], expected: SchemaObject[]): SchemaDifference[] {
  const wanted = new Map(expected.map((object) => [object.name, object]));
  const differences: SchemaDifference[] = [];
  const differ = (kind: SchemaDifference['kind'], object: SchemaObject, problem: string) =>
    differences.push({ kind, type: object.type, name: object.name, table: object.table, problem });
  for (const object of actual) {
    const own = wanted.get(object.name);
    wanted.delete(object.name);
    if (!own) differ('unexpected', object, `${describe(object)} is not created by svc's migrations`);
    else if (own.type !== object.type || own.table !== object.table) differ('changed', object, `${describe(object)} is where svc's migrations create ${describe(own)}`);
    else if (own.sql !== object.sql && normalizeSql(own.sql) !== normalizeSql(object.sql)) differ('changed', object, `${describe(object)} is not defined as svc's migrations define it`);
  }
  for (const own of wanted.values()) differ('missing', own, `${describe(own)} is missing`);
  return differences;
}
