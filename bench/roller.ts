#!/usr/bin/env bun
// The stats roller on realistic data (issue 29, item 6): N scans shaped like a real bulk import
// (bench/lib/scans.ts realisticScanGenerator: 5,000 hostnames, 40 countries, 6 platforms, 8 page
// types, grades A–F, a few % nulls, anywhere in a year), folded into the rollups by the server's
// roller, then `--live` more scans arriving as today's telemetry does (scannedAt now), the steady
// state of a busy server. For each: scans folded per second of CPU and rollup rows per scan (the
// fold run on this thread, src/storage/sqlite/scan-roller.ts, timed by the thread's CPU clock), the longest batch,
// and how long the request thread was held while the server's Worker folded the same scans
// (bench/lib/holds.ts, the import only: the Worker's batches must not hold it at all). A digest of the rollups
// compares two versions of the roller on the same scans.
// Usage: bun bench/roller.ts [--scans 300000] [--live 100000]
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { attachRollups, rollupsFileOf } from '../src/storage/sqlite/db/rollups-file.ts';
import { createRoller } from '../src/storage/sqlite/scan-roller.ts';
import { createScanRollups } from '../src/storage/sqlite/scan-rollups.ts';
import { holdsRow, measureHolds, threadCpuMs } from './lib/holds.ts';
import { realisticScanGenerator } from './lib/scans.ts';

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { scans: { type: 'string', default: '300000' }, live: { type: 'string', default: '100000' } } });
const SCANS = Number(values.scans);
const LIVE = Number(values.live);
const NOW = Date.UTC(2026, 10, 1, 12);

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-roller-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const database = openDatabase(path.join(work, 'svc.db'));
migrateDatabase(database);
const { sqlite } = database;
const stats = database.stats();
const generate = realisticScanGenerator(sqlite, NOW);
for (let done = 0; done < SCANS; done += 50_000) generate(Math.min(50_000, SCANS - done));
sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');

const rollupRows = () => (stats.query('SELECT count(*) AS n FROM rollups.scan_rollups').get() as { n: number }).n;
/** SHA-256 of the rollups as stored (sums rounded to 1e-6: their last bits follow the order of addition). */
const rollupDigest = () => {
  const hasher = new Bun.CryptoHasher('sha256');
  for (const table of ['SELECT * FROM rollups.scan_rollups ORDER BY cuboid, country, platform, page_type, grade, day', 'SELECT * FROM rollups.scan_hostname_rollups ORDER BY dimension, value, hostname']) {
    for (const row of stats.query<Record<string, unknown>, []>(table).iterate()) {
      for (const value of Object.values(row)) hasher.update(value instanceof Uint8Array ? value : `${typeof value === 'number' ? Math.round(value * 1e6) / 1e6 : value}\u0000`);
    }
  }
  return hasher.digest('hex').slice(0, 16);
};
/** Starts the rollups afresh (the fold is measured twice on the same scans). */
const resetRollups = () => {
  const rollups = new Database(rollupsFileOf(database.file));
  rollups.exec('DELETE FROM scan_rollups; DELETE FROM scan_hostname_rollups; UPDATE scan_rollup_state SET watermark = 0');
  rollups.close();
};

// The fold on this thread: its CPU, batch by batch.
const own = new Database(database.file, { strict: true });
own.exec('PRAGMA wal_autocheckpoint = 0');
attachRollups(own, database.file);
const roller = createRoller(own, writePause(own));
const never = new AbortController().signal;
const foldHere = async (name: string, scans: number) => {
  const rowsBefore = rollupRows();
  const cpuBefore = threadCpuMs();
  const started = performance.now();
  const folded = await roller.foldAll(never);
  const cpuMs = threadCpuMs() - cpuBefore;
  if (folded !== scans) throw new Error(`${name}: folded ${folded} of ${scans}`);
  const rows = rollupRows() - rowsBefore;
  console.log(
    `${name}: ${folded.toLocaleString('en')} scans in ${((performance.now() - started) / 1000).toFixed(1)} s, ` +
      `${Math.round((folded / cpuMs) * 1000).toLocaleString('en')} scans per second of CPU, ${rows.toLocaleString('en')} new rollup rows (${(rows / folded).toFixed(2)} per scan)`,
  );
};
// The same scans folded by the server's Worker: what the request thread is held meanwhile.
const rollups = createScanRollups(database);
// Started before the measures, as the server starts it at boot: its start-up is not a fold.
await rollups.ready();
const foldInWorker = async (name: string, scans: number) => {
  let folded = 0;
  const holds = await measureHolds(async () => {
    folded = await rollups.runOnce();
  });
  if (folded !== scans) throw new Error(`${name}: the Worker folded ${folded} of ${scans}`);
  console.log(holdsRow(`  ${name}, request thread while the Worker folds`, holds));
};

// The Worker first, while this thread's heap is small: a collection of the fold's garbage here
// would count as a hold of the request thread.
await foldInWorker('import', SCANS);
const digest = rollupDigest();
console.log(`rollups after the import: sha256 ${digest}`);
resetRollups();
await foldHere('import', SCANS);
if (rollupDigest() !== digest) throw new Error('the fold on this thread built other rollups than the Worker');
if (LIVE > 0) {
  const live = realisticScanGenerator(sqlite, NOW, 99);
  // Live scans: scannedAt within the last ten minutes, as telemetry sends them.
  sqlite.exec(`CREATE TEMP TRIGGER live_now AFTER INSERT ON scans BEGIN UPDATE scans SET scanned_at = ${NOW} - (new.rowid % 600000) WHERE rowid = new.rowid; END`);
  for (let done = 0; done < LIVE; done += 50_000) live(Math.min(50_000, LIVE - done));
  sqlite.exec('DROP TRIGGER live_now');
  await foldHere('live', LIVE);
}
await rollups.stop();
own.close();
database.close();
