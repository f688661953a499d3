// Types that several capabilities share live with the capability that owns them (issue 30): the
// database schemas (src/storage/sqlite/db/schema/, src/storage/postgres/db/schema/) hold tables and the row types drizzle
// infers from them, and import every value type their columns carry (platforms, statuses, kinds)
// from its capability. Read from the sources, so a vocabulary added to a schema file, or a module
// that reaches into the schema for one, fails here.
import { describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');
const SCHEMA_DIRS = ['src/storage/sqlite/db/schema/', 'src/storage/postgres/db/schema/'];
/** The engines' schemas and migrations. */
const DB_DIRS = ['src/storage/sqlite/db/', 'src/storage/postgres/db/'];
const inDb = (file: string) => DB_DIRS.some((dir) => file.startsWith(dir));

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const isSchemaFile = (file: string) => SCHEMA_DIRS.some((dir) => file.startsWith(dir));
const schemaFiles = () => SCHEMA_DIRS.flatMap((dir) => [...new Glob(`${dir}*.ts`).scanSync(ROOT)]).sort();

interface Export {
  file: string;
  name: string;
  /** The declaration up to the end of its first line. */
  text: string;
}

/** Every named export of a file, and each `export * from` a module outside the schema (a schema index re-exports its own files only). */
function exportsOf(file: string): Export[] {
  const found: Export[] = [];
  for (const match of read(file).matchAll(/^export\s+\*\s+(?:as\s+\w+\s+)?from\s+'([^']+)'[^\n]*/gm)) {
    if (!isSchemaFile(path.relative(ROOT, path.resolve(ROOT, path.dirname(file), match[1]!)))) found.push({ file, name: '*', text: match[0] });
  }
  for (const match of read(file).matchAll(/^export\s+(?:declare\s+)?(?:const|let|var|function|class|interface|type|enum)\s+(\w+)[^\n]*/gm)) {
    found.push({ file, name: match[1]!, text: match[0] });
  }
  for (const match of read(file).matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}[^\n]*/gm)) {
    for (const name of match[1]!.split(',').map((n) => n.trim().split(/\s+as\s+/).pop()!.replace(/^type\s+/, ''))) {
      if (name) found.push({ file, name, text: match[0] });
    }
  }
  return found;
}

/** What a schema file may export: a table, a row type drizzle infers from one, or (the PostgreSQL schema's columns.ts) a column kind. */
function isSchemaOwn(entry: Export): boolean {
  if (/^export const \w+ = (sqliteTable|pgTable)\(/.test(entry.text)) return true;
  if (/^export type \w+ = typeof \w+\.\$infer(Select|Insert);$/.test(entry.text)) return true;
  if (entry.file === 'src/storage/postgres/db/schema/columns.ts' && /^export (function \w+\(name: string\)|const \w+ = customType<)/.test(entry.text)) return true;
  return false;
}

interface Import {
  file: string;
  /** Resolved, relative to the repository root. */
  target: string;
  /** Null for `import * as x`. */
  names: string[] | null;
}

/** The relative imports and re-exports of a file, resolved. */
function importsOf(file: string): Import[] {
  const found: Import[] = [];
  // The clause holds no quote, so a match never runs on past the module of its own statement.
  const pattern = /^(?:import|export)\s+(?:type\s+)?([^'";]*?)\s+from\s+'([^']+)'/gm;
  for (const match of read(file).matchAll(pattern)) {
    const clause = match[1]!;
    if (!match[2]!.startsWith('.')) continue;
    const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), match[2]!));
    const braces = clause.match(/\{([^}]*)\}/);
    const names = braces
      ? braces[1]!
          .split(',')
          .map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!)
          .filter(Boolean)
      : clause.includes('*')
        ? null
        : [];
    found.push({ file, target, names });
  }
  return found;
}

const sourceFiles = () =>
  ['src', 'widget', 'test', 'scripts', 'bench', 'clients'].flatMap((dir) => [...new Glob(`${dir}/**/*.{ts,tsx}`).scanSync(ROOT)]).filter((f) => !f.includes('node_modules'));

describe('types live with the capability that owns them, not in the database schema', () => {
  test('the schema files export only tables and their row types', () => {
    const files = schemaFiles();
    expect(files.length).toBeGreaterThanOrEqual(20);
    const exported = files.flatMap(exportsOf);
    // Sanity: the rule sees tables and row types in both schemas.
    expect(exported.filter((e) => e.file.startsWith('src/storage/postgres/db/') && isSchemaOwn(e)).length).toBeGreaterThanOrEqual(15);
    expect(exported.filter((e) => e.file.startsWith('src/storage/sqlite/db/schema/') && isSchemaOwn(e)).length).toBeGreaterThanOrEqual(15);
    const foreign = exported.filter((e) => !isSchemaOwn(e));
    if (foreign.length > 0) {
      throw new Error(
        'the database schema defines types or lists of its own; define them in the capability that owns them (a leaf module ' +
          'such as src/stores/types.ts) and import them into both schemas:\n' +
          foreign.map((e) => `  ${e.file}: ${e.text}`).join('\n'),
      );
    }
  });

  test("no module outside the engines' db/ takes a value type from the schema: only tables and row types", () => {
    const schemaOwn = new Set(schemaFiles().flatMap(exportsOf).filter(isSchemaOwn).map((e) => e.name));
    const files = sourceFiles().filter((f) => !inDb(f));
    expect(files.length).toBeGreaterThan(100);
    const reaching: string[] = [];
    let schemaImports = 0;
    for (const file of files) {
      for (const { target, names } of importsOf(file)) {
        if (!isSchemaFile(target) || names === null) continue;
        schemaImports++;
        for (const name of names) {
          if (!schemaOwn.has(name)) reaching.push(`  ${file}: ${name} from ${target}`);
        }
      }
    }
    // Sanity: the rule sees the modules that do import rows and tables from the schema (fewer as
    // capabilities move behind the storage seam: the engine implementations stay).
    expect(schemaImports).toBeGreaterThan(10);
    if (reaching.length > 0) {
      throw new Error(`these modules import a capability's type from the database schema; import it from its capability:\n${reaching.join('\n')}`);
    }
  });

  test("the capability modules the schema imports never import the schema back (no cycle)", () => {
    const owners = new Set(
      schemaFiles()
        .flatMap(importsOf)
        .map((i) => i.target)
        .filter((t) => !inDb(t)),
    );
    // The schemas import the platforms, statuses and store settings from their capabilities.
    expect(owners.size).toBeGreaterThanOrEqual(3);
    const cycles: string[] = [];
    for (const owner of owners) {
      const seen = new Set<string>();
      const walk = (file: string, trail: string[]) => {
        if (seen.has(file) || !existsSync(path.join(ROOT, file))) return;
        seen.add(file);
        for (const { target } of importsOf(file)) {
          if (inDb(target)) cycles.push(`  ${[...trail, file, target].join(' -> ')}`);
          else walk(target, [...trail, file]);
        }
      };
      walk(owner, []);
    }
    if (cycles.length > 0) {
      throw new Error(`a module the schema imports reaches back into an engine's db/; keep owned types in a leaf module:\n${cycles.join('\n')}`);
    }
  });
});
