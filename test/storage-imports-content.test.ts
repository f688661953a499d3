// The storage seam (issue 30): only the engine implementations (src/storage/sqlite/,
// src/storage/postgres/) and the database modules (src/db/) reach an engine: bun:sqlite, drizzle-orm
// or Bun's `SQL`. Everything else takes records (src/storage/<domain>.ts). Read from the sources, so
// a capability that queries an engine again fails here, naming the file and the import.
import { describe, expect, test } from 'bun:test';
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');

/** Where an engine may be imported. */
const ENGINE_DIRS = ['src/storage/sqlite/', 'src/storage/postgres/', 'src/db/'];

/** Modules not moved behind the seam yet: the list shrinks as each domain moves (and a moved file must leave it). */
const NOT_YET_MOVED = [
  'src/auth/key-usage.ts',
  'src/auth/keys.ts',
  'src/auth/leads.ts',
  'src/auth/verified-cache.ts',
  'src/console/sessions.ts',
  'src/health/routes.ts',
  'src/lib/change-stamp.ts',
  'src/lib/instance-lock.ts',
  'src/lib/table-writes.ts',
  'src/lib/write-pause.ts',
  'src/lib/write-transaction.ts',
  'src/observability/service.ts',
  'src/scans/backlog.ts',
  'src/scans/dashboard-worker.ts',
  'src/scans/queries.ts',
  'src/scans/roller-worker.ts',
  'src/scans/roller.ts',
  'src/scans/rollups.ts',
  'src/scans/stats.ts',
  'src/signals/discovery.ts',
  'src/signals/service.ts',
  'src/telemetry/writer.ts',
];

/** The content domain's capability modules and its seam: moved, so they take records and reach neither an engine nor src/db/. */
const CONTENT_MODULES = ['src/faqs/store.ts', 'src/enrichment/store.ts', 'src/catalog/entries.ts', 'src/catalog/products.ts', 'src/storage/content.ts', 'src/storage/synchronous.ts'];

/** The stores, sync, jobs and deliveries domain's capability modules and its seam: moved likewise. */
const STORES_MODULES = [
  'src/stores/admin.ts',
  'src/stores/connect.ts',
  'src/stores/registry.ts',
  'src/stores/removal.ts',
  'src/sync/service.ts',
  'src/sync/sources.ts',
  'src/sync/state.ts',
  'src/webhooks/deliveries.ts',
  'src/webhooks/dispatch.ts',
  'src/webhooks/product-fetch.ts',
  'src/webhooks/queue.ts',
  'src/webhooks/receive.ts',
  'src/webhooks/removal.ts',
  'src/storage/stores.ts',
  'src/storage/store-holdings.ts',
];

interface Import {
  module: string;
  /** The import clause (`{ SQL, type X }`, `* as x`, empty for a dynamic import). */
  clause: string;
}

/** Static imports and re-exports (over several lines too) and dynamic imports of a source file. */
function importsOf(file: string): Import[] {
  const source = readFileSync(path.join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const match of source.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?([^'";]*?)\s*from\s*'([^']+)'/gm)) found.push({ module: match[2]!, clause: match[1]! });
  for (const match of source.matchAll(/^\s*import\s+'([^']+)'/gm)) found.push({ module: match[1]!, clause: '' });
  for (const match of source.matchAll(/\b(?:import|require)\(\s*'([^']+)'\s*\)/g)) found.push({ module: match[1]!, clause: '' });
  return found;
}

/** What in an import reaches an engine, or null. */
function engineReached({ module, clause }: Import): string | null {
  if (module === 'bun:sqlite' || module === 'drizzle-orm' || module.startsWith('drizzle-orm/')) return module;
  if (module === 'bun' && /(^|[{,\s])SQL([\s,}]|$)/.test(clause)) return "SQL from 'bun'";
  return null;
}

const sources = () => [...new Glob('src/**/*.{ts,tsx}').scanSync(ROOT)].sort();

describe('the storage seam: only the engine implementations reach an engine', () => {
  test('no module outside src/storage/sqlite/, src/storage/postgres/ and src/db/ imports bun:sqlite, drizzle-orm or SQL from bun (but those not moved yet)', () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(100);
    const reaching = files.flatMap((file) => importsOf(file).flatMap((entry) => (engineReached(entry) ? [{ file, what: engineReached(entry)! }] : [])));
    // Sanity: the rule sees the engine implementations' own imports.
    expect(reaching.filter((r) => ENGINE_DIRS.some((dir) => r.file.startsWith(dir))).map((r) => r.what)).toEqual(expect.arrayContaining(['bun:sqlite', 'drizzle-orm', "SQL from 'bun'"]));
    const offending = reaching.filter((r) => !ENGINE_DIRS.some((dir) => r.file.startsWith(dir)) && !NOT_YET_MOVED.includes(r.file));
    if (offending.length > 0) {
      throw new Error(`these modules reach an engine; put the query in src/storage/<engine>/ behind a records interface (CONTRIBUTING.md, Storage seam):\n${offending.map((r) => `  ${r.file}: ${r.what}`).join('\n')}`);
    }
  });

  test('the list of modules not moved yet holds only modules that still reach an engine (a moved one leaves it)', () => {
    const stale = NOT_YET_MOVED.filter((file) => !sources().includes(file) || !importsOf(file).some((entry) => engineReached(entry) !== null));
    expect(stale).toEqual([]);
  });

  test.each([
    ['content', CONTENT_MODULES],
    ['stores, sync, jobs and deliveries', STORES_MODULES],
  ])('the %s capabilities and their seam import nothing from src/db/ nor an engine implementation', (_domain, modules) => {
    const reaching = modules.flatMap((file) =>
      importsOf(file)
        .filter(({ module }) => module.startsWith('.'))
        .map(({ module }) => path.relative(ROOT, path.resolve(ROOT, path.dirname(file), module)))
        .filter((target) => ENGINE_DIRS.some((dir) => target.startsWith(dir)))
        .map((target) => `  ${file}: ${target}`),
    );
    expect(reaching).toEqual([]);
    expect(modules.flatMap((file) => importsOf(file).filter((entry) => engineReached(entry) !== null))).toEqual([]);
  });
});
