#!/usr/bin/env bun
// Background work and the event loop (issue 12, item 5): how long each background task holds the
// request thread at a stretch, on a real SQLite file with a backlog, as the server runs them (WAL
// checkpoints in their Worker). Each task runs alone with a setImmediate ticker beside it
// (bench/lib/holds.ts): the longest gap between ticks, less the time other processes had the CPU,
// is the longest hold. Goal: <= 5 ms for every task. The same ticker over an idle second is the
// baseline (the machine's own noise). The job worker's holds are measured by bench/sync.ts.
//   (1) the scan roller folding a backlog of N scans into the stats rollups (in its Worker: what
//       the request thread is held is the messages and collections of its own; bench/roller.ts
//       measures the fold itself)
//   (2) scan retention deleting the older half of them (rollups kept in step; in the same Worker)
//   (3) record retention deleting N expired webhook deliveries
//   (4) telemetry scans committed by the scan writer non-stop for S seconds, 64 per turn of the event
//       loop: the WAL passes its restart threshold and the checkpointer pauses the group commits
//       until it caught up (the rows queued meanwhile are then written a ~2 ms slice per turn)
// Under each task, the garbage collections in its turns (bench/lib/holds.ts, withGcLog): the longest
// turn without one is the task's own step.
// Usage: bun bench/stalls.ts [--scans 50000] [--telemetry-seconds 4] [--only 1,2,3,4]
// (--only: the tasks to run, by number; the others are skipped, e.g. --only 1 for the roller alone)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startCheckpointer } from '../src/storage/sqlite/db/checkpoint.ts';
import { migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { createRecordRetention } from '../src/retention/records.ts';
import { sqliteRetentionRecords } from '../src/storage/sqlite/retention.ts';
import { STEP_BUDGET_MS } from '../src/lib/periodic.ts';
import { writePause } from '../src/storage/sqlite/write-pause.ts';
import { DAY_MS } from '../src/lib/time.ts';
import { createScanRetention } from '../src/scans/retention.ts';
import { createScanRollups } from '../src/storage/sqlite/scan-rollups.ts';
import { normalizeScan } from '../src/telemetry/payload.ts';
import { createScanWriter } from '../src/telemetry/writer.ts';
import { sqliteScanWriteRecordsSync } from '../src/storage/sqlite/scans.ts';
import { holdsRow, measureHolds, withGcLog, type Holds } from './lib/holds.ts';
import { generateScans, SPAN_MS } from './lib/scans.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { scans: { type: 'string', default: '50000' }, 'telemetry-seconds': { type: 'string', default: '4' }, only: { type: 'string', default: '1,2,3,4' } },
});
const SCANS = Number(values.scans);
const TELEMETRY_SECONDS = Number(values['telemetry-seconds']);
const ONLY = new Set(values.only.split(',').map(Number));
// Runs the bench again with the garbage collector's log on, to tell each turn's collections from the task's own work.
withGcLog();
/** The holds of a task, or null when --only leaves it out. */
const measured = (task: number, work: () => Promise<unknown>): Promise<Holds | null> => (ONLY.has(task) ? measureHolds(work) : Promise.resolve(null));
const GOAL_MS = 5;
// A fixed clock: the same scans, the same rollups, in every run (their digest is printed).
const NOW = Date.UTC(2026, 10, 1);

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-stalls-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const database = openDatabase(path.join(work, 'svc.db'));
migrateDatabase(database);
const { sqlite } = database;
generateScans(sqlite, SCANS, NOW);
const insertDelivery = sqlite.prepare("INSERT INTO webhook_deliveries (id, store_id, platform, topic, dedupe_key, outcome, received_at) VALUES (?, 's', 'platform-a', 'products/update', ?, 'applied', ?)");
sqlite.transaction(() => {
  for (let i = 0; i < SCANS; i++) insertDelivery.run(`d${i}`, `event:${i}`, NOW - 400 * DAY_MS + i);
})();
sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
const checkpointer = await startCheckpointer(sqlite, database.file, console.error);
const clock = { now: () => NOW };
// (4) writes scans normalised before its clock starts (parsing is each request's own work, not the
// writer's): each write takes one of these with a url and a time of its own.
const scanPool = Array.from({ length: 512 }, (_, i) => {
  const result = normalizeScan(scanReport(i, new Date().toISOString()), Date.now());
  if (!result.ok) throw new Error(result.detail);
  return result.scan;
});
const telemetryScan = (i: number) => {
  const scan = scanPool[i % scanPool.length]!;
  return { ...scan, url: `${scan.url}?n=${i}`, scannedAt: scan.scannedAt + i };
};

const idle = await measureHolds(() => Bun.sleep(1000));
const rollups = createScanRollups(database);
// Started before the measures, as the server starts it at boot: its start-up is not a fold.
await rollups.ready();
let rolled = 0;
const roller = await measured(1, async () => {
  rolled = await rollups.runOnce();
});
/**
 * SHA-256 of the rollups as stored, to compare two versions of the roller on the same scans. Sums of
 * percentages are rounded to 1e-6: their last bits follow the order of addition, which follows the
 * timed step sizes.
 */
const rollupDigest = () => {
  const hasher = new Bun.CryptoHasher('sha256');
  for (const table of ['SELECT * FROM rollups.scan_rollups ORDER BY cuboid, country, platform, page_type, grade, day', 'SELECT * FROM rollups.scan_hostname_rollups ORDER BY dimension, value, hostname']) {
    for (const row of database.stats().query<Record<string, unknown>, []>(table).iterate()) {
      for (const value of Object.values(row)) hasher.update(value instanceof Uint8Array ? value : `${typeof value === 'number' ? Math.round(value * 1e6) / 1e6 : value}\u0000`);
    }
  }
  return hasher.digest('hex').slice(0, 16);
};
const rolledDigest = roller ? rollupDigest() : '';
let deletedScans = 0;
const scanRetention = await measured(2, async () => {
  deletedScans = await createScanRetention(clock, SPAN_MS / DAY_MS / 2, rollups).runOnce();
});
let deletedRecords = 0;
const recordRetention = await measured(3, async () => {
  const days = { webhookDeliveryDays: 30, jobDays: 0, storeEventDays: 0, orderSignalDays: 0, unusedLeadDays: 0 };
  deletedRecords = await createRecordRetention(sqliteRetentionRecords({ sqlite }), clock, days, { pause: writePause(sqlite) }).runOnce();
});
const walBefore = statSync(`${database.file}-wal`).size;
sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)'); // (4) starts from an empty log
let groups = 0;
let largestGroup = 0;
const writer = createScanWriter(sqliteScanWriteRecordsSync(database), undefined, {
  onCommit: (rows) => {
    groups++;
    largestGroup = Math.max(largestGroup, rows);
  },
});
let written = 0;
let largestWal = 0;
const telemetry = await measured(4, async () => {
  // One Promise.all per turn: a single one over all of the ~100k writes at the end would itself
  // hold the loop for several ms (it counted in this task's longest turn before).
  const turns: Promise<void[]>[] = [];
  for (const end = performance.now() + TELEMETRY_SECONDS * 1000; performance.now() < end; ) {
    const commits: Promise<void>[] = [];
    for (let i = 0; i < 64; i++, written++) commits.push(writer.write(telemetryScan(written), Date.now()));
    turns.push(Promise.all(commits));
    largestWal = Math.max(largestWal, statSync(`${database.file}-wal`).size);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(turns);
});
writer.close();
await checkpointer.stop();
database.close();

const results = (
  [
    [`(1) roller: ${rolled} scans folded`, roller],
    [`(2) scan retention: ${deletedScans} deleted`, scanRetention],
    [`(3) record retention: ${deletedRecords} deleted`, recordRetention],
    [`(4) telemetry: ${written} scans, ${checkpointer.restarts} WAL restarts`, telemetry],
  ] as [string, Holds | null][]
).filter((result): result is [string, Holds] => result[1] !== null);
console.log(`${SCANS} scans over a year; steps aim at ${STEP_BUDGET_MS} ms (the roller and scan retention run in their Worker); ${navigator.hardwareConcurrency} CPUs`);
console.log(holdsRow('idle loop (machine noise)', idle));
if (roller) {
  console.log(`rollups after (1): sha256 ${rolledDigest} (the same scans give the same digest whichever version rolled them)`);
}
for (const [name, holds] of results) console.log(holdsRow(name, holds));
console.log(`WAL file after (1)–(3): ${(walBefore / 1e6).toFixed(1)} MB; during (4) at most ${(largestWal / 1e6).toFixed(1)} MB; group commits paused ${checkpointer.longestPauseMs.toFixed(1)} ms at most`);
if (telemetry) console.log(`(4) ${groups} group commits, the largest of ${largestGroup} rows`);
const worst = results.reduce((a, b) => (b[1].heldMs > a[1].heldMs ? b : a));
console.log(`worst: ${worst[0]}, held ${worst[1].heldMs.toFixed(1)} ms (goal <= ${GOAL_MS} ms for every task: ${worst[1].heldMs <= GOAL_MS ? 'met' : 'NOT met'})`);
