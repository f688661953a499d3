// The storage seam (issue 30): routes and services do not know which engine is behind them. Only
// the engine implementations (src/storage/sqlite/, src/storage/postgres/, with their schemas and
// migrations in db/) may import an engine: bun:sqlite, drizzle-orm (its query builders and dialect
// modules), Bun's PostgreSQL client (SQL from 'bun', Bun.SQL), or an engine's db/ itself.
// Read from the sources, so a module that reaches for an engine fails here, naming the import.
import { describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');

/** Where an engine may be imported. */
const ENGINE_DIRS = ['src/storage/sqlite/', 'src/storage/postgres/'];
/** An engine's schemas and migrations. */
const ENGINE_DB = /^src\/storage\/(sqlite|postgres)\/db(\/|$)/;


/** The engines `source` (the text of `file`) imports, type-only imports too: a type from an engine is knowledge of it. */
function enginesIn(file: string, source: string): string[] {
  const found: string[] = [];
  // Static imports and re-exports (their clause holds no quote), side-effect imports, dynamic imports.
  const statements = /^\s*(?:import|export)\s+(?:type\s+)?([^'";]*?)\s+from\s+'([^']+)'|^\s*import\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm;
  for (const match of source.matchAll(statements)) {
    const clause = match[1] ?? '';
    const module = (match[2] ?? match[3] ?? match[4])!;
    if (module === 'bun:sqlite' || module === 'drizzle-orm' || module.startsWith('drizzle-orm/')) found.push(module);
    else if (module === 'bun' && /\bSQL\b/.test(clause)) found.push(`SQL (bun)`);
    else if (module.startsWith('.')) {
      const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), module));
      if (ENGINE_DB.test(target)) found.push(target);
    }
  }
  if (/\bBun\.SQL\b/.test(source)) found.push('Bun.SQL');
  return found;
}

const enginesImportedBy = (file: string) => enginesIn(file, readFileSync(path.join(ROOT, file), 'utf8'));

const sourceFiles = () => [...new Glob('src/**/*.{ts,tsx}').scanSync(ROOT)].sort();
const mayImportEngines = (file: string) => ENGINE_DIRS.some((dir) => file.startsWith(dir));

describe('the storage seam: only the engine implementations import an engine', () => {
  test('no module outside src/storage/sqlite/ and src/storage/postgres/ imports an engine', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(100);
    // Sanity: the rule sees the engines where they are imported.
    const engineImports = files.filter(mayImportEngines).flatMap(enginesImportedBy);
    for (const engine of ['bun:sqlite', 'drizzle-orm', 'drizzle-orm/bun-sql', 'SQL (bun)']) expect(engineImports).toContain(engine);
    const reaching = files
      .filter((file) => !mayImportEngines(file))
      .flatMap((file) => enginesImportedBy(file).map((engine) => `  ${file}: ${engine}`));
    if (reaching.length > 0) {
      throw new Error(`these modules import an engine; take the records interface of their domain (src/storage/<domain>.ts) instead, and put the query in both engines (CONTRIBUTING.md, "Storage seam"):\n${reaching.join('\n')}`);
    }
  });

  test('the rule sees every way of importing an engine', () => {
    const probe = 'src/probe.ts';
    const lines = [
      "import type { Database } from 'bun:sqlite';",
      "import { eq } from 'drizzle-orm';",
      "export { sqliteTable } from 'drizzle-orm/sqlite-core';",
      "import { Glob, SQL } from 'bun';",
      "import type { AppDatabase } from './storage/sqlite/db/index.ts';",
      "const lazy = await import('./storage/postgres/db/schema/index.ts');",
      'const client = new Bun.SQL();',
    ];
    const seen = enginesIn(probe, lines.join('\n'));
    expect(seen).toEqual(['bun:sqlite', 'drizzle-orm', 'drizzle-orm/sqlite-core', 'SQL (bun)', 'src/storage/sqlite/db/index.ts', 'src/storage/postgres/db/schema/index.ts', 'Bun.SQL']);
    expect(enginesIn(probe, "import { Glob } from 'bun';\nimport type { ChangeFeed } from './storage/changes.ts';")).toEqual([]);
  });
});
