import type { ReservedSQL } from 'bun';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * svc runs no code in its PostgreSQL database that its migrations did not put there, as it runs none
 * in a SQLite file (src/storage/sqlite/db/index.ts, checkSchema). What runs on svc's writes without
 * svc asking is a trigger or a rule on one of its tables (drizzle's migrations table included),
 * and the function a trigger calls. Before migrating, and so before any of svc's writes, each start
 * compares them with what the migrations the database records create: a trigger or rule they do not
 * create, a trigger function whose body is not theirs, or a trigger of theirs that is missing,
 * refuses the start. Only svc's tables are looked at: a database svc shares with other applications
 * keeps their triggers on their own tables. Event triggers (database-wide, a superuser's, and
 * installed by some managed services) are left to the database's owner.
 */

/** A difference the check found, as one clause of the refusal. */
export type CodeDifference = string;

/** The database runs code svc did not put there: refused before anything of svc's ran. */
export class PostgresCodeMismatchError extends Error {
  override name = 'PostgresCodeMismatchError';
  constructor(readonly differences: CodeDifference[]) {
    const named = differences.slice(0, 3);
    if (differences.length > named.length) named.push(`and ${differences.length - named.length} more`);
    super(`the PostgreSQL database runs code svc did not create: ${named.join('; ')}. Refused before svc wrote anything: remove what svc did not create, or restore a dump of svc's database`);
  }
}

/** drizzle's table of applied migrations, which svc writes while it migrates. */
const MIGRATIONS_TABLE = { schema: 'drizzle', table: '__drizzle_migrations' };

/** What the `applied` migrations (their tags, in order) create: svc's tables, the triggers on them (`table.trigger`), and the trigger functions' bodies. */
export function migrationsCode(folder: string, applied: string[]): { tables: Set<string>; triggers: Set<string>; functions: Map<string, string> } {
  const tables = new Set<string>();
  const triggers = new Set<string>();
  const functions = new Map<string, string>();
  for (const tag of applied) {
    const text = readFileSync(path.join(folder, `${tag}.sql`), 'utf8');
    for (const [, table] of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?(\w+)"?/gi)) tables.add(table!);
    for (const [, table] of text.matchAll(/DROP TABLE (?:IF EXISTS )?"?(\w+)"?/gi)) tables.delete(table!);
    for (const [, name, table] of text.matchAll(/CREATE (?:OR REPLACE )?TRIGGER "?(\w+)"?[^;]*? ON "?(\w+)"?/gi)) triggers.add(`${table}.${name}`);
    for (const [, name, table] of text.matchAll(/DROP TRIGGER (?:IF EXISTS )?"?(\w+)"? ON "?(\w+)"?/gi)) triggers.delete(`${table}.${name}`);
    for (const [, name, body] of text.matchAll(/CREATE (?:OR REPLACE )?FUNCTION "?(\w+)"?\(\)[^$]*?AS \$\$([\s\S]*?)\$\$/gi)) functions.set(name!, body!);
  }
  return { tables, triggers, functions };
}

/** The triggers and rules on svc's tables and on drizzle's, with the functions the triggers call, against what the `applied` migrations create. */
export async function codeDifferences(session: ReservedSQL, folder: string, applied: string[]): Promise<CodeDifference[]> {
  const expected = migrationsCode(folder, applied);
  const tables = [...expected.tables];
  const found = (await session`
    SELECT n.nspname AS schema, c.relname AS "table", t.tgname AS name, p.proname AS function, p.prosrc AS body
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_proc p ON p.oid = t.tgfoid
    WHERE NOT t.tgisinternal
      AND ((n.nspname = current_schema() AND c.relname = ANY(${tables}::text[]))
        OR (n.nspname = ${MIGRATIONS_TABLE.schema} AND c.relname = ${MIGRATIONS_TABLE.table}))
    ORDER BY 1, 2, 3`) as { schema: string; table: string; name: string; function: string; body: string }[];
  const rules = (await session`
    SELECT tablename AS "table", rulename AS name FROM pg_rules
    WHERE (schemaname = current_schema() AND tablename = ANY(${tables}::text[]))
       OR (schemaname = ${MIGRATIONS_TABLE.schema} AND tablename = ${MIGRATIONS_TABLE.table})
    ORDER BY 1, 2`) as { table: string; name: string }[];

  const differences: CodeDifference[] = [];
  const seen = new Set<string>();
  for (const trigger of found) {
    const own = trigger.schema !== MIGRATIONS_TABLE.schema && expected.triggers.has(`${trigger.table}.${trigger.name}`);
    if (!own) differences.push(`trigger "${trigger.name}" on "${trigger.table}"`);
    else if (expected.functions.get(trigger.function) !== trigger.body) differences.push(`trigger "${trigger.name}" on "${trigger.table}" calls ${trigger.function}(), whose body is not svc's`);
    if (own) seen.add(`${trigger.table}.${trigger.name}`);
  }
  for (const rule of rules) differences.push(`rule "${rule.name}" on "${rule.table}"`);
  for (const trigger of expected.triggers) {
    const [table, name] = trigger.split('.');
    if (!seen.has(trigger)) differences.push(`svc's trigger "${name}" on "${table}" is missing`);
  }
  return differences;
}
