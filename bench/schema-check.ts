#!/usr/bin/env bun
// Cost of the schema check (docs/operations.md, "Checking a database") that every `svc serve`,
// `svc migrate` and `svc restore` runs before anything else: generates a database with `--scans`
// scans in a temp directory, then, in fresh processes as a start would, times the first check (it
// reads the migrations, migrates an in-memory database to the file's version and compares every
// object of sqlite_master) and a second one in the same process (the expected schema is kept).
// Prints the median and worst over `--runs` processes. Figures, not assertions.
// Usage: bun bench/schema-check.ts [--scans 1000000] [--runs 9]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkSchema, migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { generateScans } from './lib/scans.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { scans: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '9' }, measure: { type: 'string' } },
});

/** In a fresh process: the first and a second check of `file`, in ms, as one JSON line. */
function measure(file: string): void {
  const database = openDatabase(file);
  const time = () => {
    const started = performance.now();
    const { differences } = checkSchema(database.sqlite, file);
    if (differences.length) throw new Error(`unexpected differences: ${JSON.stringify(differences)}`);
    return performance.now() - started;
  };
  const first = time();
  const again = time();
  database.close();
  console.log(JSON.stringify({ first, again }));
}

if (values.measure) {
  measure(values.measure);
} else {
  const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-schema-check-'));
  process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  const file = path.join(work, 'svc.db');
  const database = openDatabase(file);
  migrateDatabase(database);
  generateScans(database.sqlite, Number(values.scans), Date.now());
  database.sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  database.close();
  const runs: { first: number; again: number }[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const child = Bun.spawnSync([process.execPath, import.meta.path, '--measure', file], { stderr: 'inherit' });
    runs.push(JSON.parse(child.stdout.toString()));
  }
  const summary = (pick: (run: { first: number; again: number }) => number) => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    return `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, worst ${sorted.at(-1)!.toFixed(1)} ms`;
  };
  console.log(`database: ${values.scans} scans, ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB`);
  console.log(`first check in a process (as at start): ${summary((run) => run.first)}`);
  console.log(`a second check in the same process:     ${summary((run) => run.again)}`);
}
