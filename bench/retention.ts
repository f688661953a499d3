#!/usr/bin/env bun
// Record-retention benchmark (issue 11, item 11): how long the event loop is held while the sweep
// deletes a large backlog of expired webhook deliveries, order signals, store events, finished jobs
// and unused sign-ups from a real SQLite file. A setImmediate ticker runs beside the sweep; the
// longest gap between its ticks, less the time other processes had the CPU, is the longest the loop
// was held (bench/lib/holds.ts). Baseline, measured in the same
// run on an identical copy: one plain DELETE per table (what an unbatched sweep would hold). The same
// ticker over an idle second shows the machine's own noise (other processes taking the CPU).
// Usage: bun bench/retention.ts [--rows 200000]
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { createRecordRetention } from '../src/retention/records.ts';
import { sqliteRetentionRecords } from '../src/storage/sqlite/retention.ts';
import { holdsRow, measureHolds } from './lib/holds.ts';

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { rows: { type: 'string', default: '200000' } } });
const ROWS = Number(values.rows);
const DAY = 86_400_000;
const NOW = Date.now();
const OLD = NOW - 400 * DAY;
const DAYS = { webhookDeliveryDays: 30, jobDays: 30, storeEventDays: 365, orderSignalDays: 90, unusedLeadDays: 30 };

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-retention-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

/** ROWS expired deliveries, half as many order signals, a quarter as many events, jobs and leads, plus as many recent deliveries. */
function seed(file: string): void {
  const database = openDatabase(file);
  migrateDatabase(database);
  const { sqlite } = database;
  const insert = (sql: string, count: number, values: (i: number) => (string | number)[]) => {
    const statement = sqlite.prepare(sql);
    sqlite.transaction(() => {
      for (let i = 0; i < count; i++) statement.run(...values(i));
    })();
  };
  insert("INSERT INTO webhook_deliveries (id, store_id, platform, topic, dedupe_key, outcome, received_at) VALUES (?, 's', 'platform-a', 'products/update', ?, 'applied', ?)", ROWS * 2, (i) => [`d${i}`, `event:${i}`, i < ROWS ? OLD + i : NOW - i]);
  insert("INSERT INTO order_signals (id, store_id, topic, order_id, status, received_at) VALUES (?, 's', 'orders/create', ?, 'paid', ?)", ROWS / 2, (i) => [`o${i}`, String(i), OLD + i]);
  sqlite.run("INSERT INTO stores (id, platform, domain, platform_ref, status, credential_kind, credentials, hook_status, hook_topics, created_at, updated_at) VALUES ('s', 'platform-a', 'a.example', 'a.myplatform-a.com', 'active', 'via-app', '{}', 'platform_managed', '[]', 0, 0)");
  insert("INSERT INTO store_events (id, store_id, kind, occurred_at) VALUES (?, 's', 'customers/redact', ?)", ROWS / 4, (i) => [`e${i}`, OLD + i]);
  insert("INSERT INTO jobs (id, kind, store_id, payload, status, attempts, run_at, created_at, finished_at) VALUES (?, 'platform-b.fetch-product', 's', '{}', 'done', 1, ?, ?, ?)", ROWS / 4, (i) => [`j${i}`, OLD, OLD, OLD + i]);
  insert('INSERT INTO leads (id, email, verified, token_hash, token_issued_at, created_at) VALUES (?, ?, 0, ?, ?, ?)', ROWS / 4, (i) => [`l${i}`, `lead${i}@example.com`, `hash${i}`, OLD, OLD + i]);
  sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  database.close();
}

// The machine's own noise: the same ticker over an idle second (other processes taking the CPU show up here).
const idle = await measureHolds(() => Bun.sleep(1000));

const seeded = path.join(work, 'seed.db');
seed(seeded);
const copy = (name: string) => {
  const file = path.join(work, name);
  copyFileSync(seeded, file);
  return openDatabase(file);
};

const baselineDb = copy('baseline.db');
const cutoff = (days: number) => NOW - days * DAY;
const baseline = await measureHolds(async () => {
  baselineDb.sqlite.run('DELETE FROM webhook_deliveries WHERE received_at < ?', [cutoff(30)]);
  baselineDb.sqlite.run('DELETE FROM order_signals WHERE received_at < ?', [cutoff(90)]);
  baselineDb.sqlite.run('DELETE FROM store_events WHERE occurred_at < ?', [cutoff(365)]);
  baselineDb.sqlite.run("DELETE FROM jobs WHERE status IN ('done', 'dead') AND finished_at < ?", [cutoff(30)]);
  baselineDb.sqlite.run('DELETE FROM leads WHERE verified = 0 AND first_scan_at IS NULL AND created_at < ?', [cutoff(30)]);
});
baselineDb.close();

const sweptDb = copy('swept.db');
let deleted = 0;
const swept = await measureHolds(async () => {
  deleted = await createRecordRetention(sqliteRetentionRecords(sweptDb), { now: () => NOW }, DAYS).runOnce();
});
const left = (sweptDb.sqlite.query('SELECT count(*) AS n FROM webhook_deliveries').get() as { n: number }).n;
sweptDb.close();

console.log(`${deleted} expired rows deleted (${ROWS} deliveries, ${ROWS / 2} order signals, ${ROWS / 4} each of events, jobs, leads); ${left} recent deliveries kept`);
console.log(holdsRow('idle loop (machine noise)', idle));
console.log(holdsRow('baseline: one DELETE per table', baseline));
console.log(holdsRow('svc: timed batches, yielding', swept));
console.log(`longest hold, baseline / svc: ${(baseline.heldMs / swept.heldMs).toFixed(0)}x`);
