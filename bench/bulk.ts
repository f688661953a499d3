#!/usr/bin/env bun
// Bulk ingest benchmark (README "Benchmarks"): scans/s through POST /api/v1/probe/scan-bulk (real HTTP
// to an in-process `startServer`, mode-2 signed (bodies encoded and signed before the clock starts),
// 1000-scan batches of realistic ~2 KB scans (bench/scan-report.ts)) against
// the raw SQLite ceiling: the same rows inserted with a prepared INSERT in one transaction into a
// scans table with two indexes (raw bun:sqlite), in the same run. Prints both and the ratio (goal >= 0.6).
// Also prints the CPU per scan of this process (main thread and all threads, bench/lib/thread-cpu.ts);
// the svc side's includes the client's fetches, which share the process. With --postgres, the same
// batches go to svc on PostgreSQL too (a throwaway server from the system's binaries, or
// --database-url), measured alike in the same run.
// Usage: bun bench/bulk.ts [--batches 20] [--postgres [--database-url URL]]; a CPU profile: bun --cpu-prof --cpu-prof-dir=DIR bench/bulk.ts
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { hmacSha256 } from '../src/lib/crypto.ts';
import { startServer } from '../src/server.ts';
import { normalizeScan } from '../src/telemetry/payload.ts';
import { newId } from '../src/lib/ids.ts';
import { createKey } from './lib/harness.ts';
import { newDatabase, postgresServer } from './lib/engine-setup.ts';
import { cpuReport, measureCpu, type CpuSide } from './lib/thread-cpu.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { batches: { type: 'string', default: '20' }, postgres: { type: 'boolean', default: false }, 'database-url': { type: 'string' } },
});
const BATCHES = Number(values.batches);
const BATCH = 1000;
const START = Date.now() - 86_400_000;

const scan = (i: number) => scanReport(i, new Date(START + i).toISOString());

const batches = Array.from({ length: BATCHES }, (_, b) => JSON.stringify({ scans: Array.from({ length: BATCH }, (_, j) => scan(b * BATCH + j)) }));
const total = BATCHES * BATCH;
console.log(`${BATCHES} batches of ${BATCH} scans, ${(batches[0]!.length / BATCH).toFixed(0)} bytes per scan`);

// (a) the raw ceiling: prepared INSERT of the same rows, one transaction, into a scans table with an
// integer primary key and two indexes, (scanned_at, url) and (hostname, scanned_at), in raw bun:sqlite.
const rawDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-bulk-raw-'));
const raw = new Database(path.join(rawDir, 'raw.db'), { create: true, strict: true });
raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
raw.exec(
  'CREATE TABLE scans (row INTEGER PRIMARY KEY, id TEXT NOT NULL, hostname TEXT NOT NULL, url TEXT NOT NULL, scanned_at INTEGER NOT NULL, received_at INTEGER NOT NULL, ' +
    'country TEXT, platform TEXT, platform_confidence REAL, page_type TEXT, grade TEXT NOT NULL, percentage REAL NOT NULL, svc_detected INTEGER, svc_version TEXT, vertical TEXT, ' +
    'has_title INTEGER, has_description INTEGER, has_json_ld INTEGER, has_open_graph INTEGER, has_h1 INTEGER, has_canonical INTEGER, has_robots INTEGER, signals TEXT NOT NULL, quality TEXT NOT NULL, data TEXT NOT NULL);' +
    'CREATE INDEX scans_scanned_at_url ON scans (scanned_at, url); CREATE INDEX scans_hostname_scanned_at ON scans (hostname, scanned_at);',
);
const rows = Array.from({ length: total }, (_, i) => {
  const checked = normalizeScan(scan(i), Date.now());
  if (!checked.ok) throw new Error(checked.detail);
  const s = checked.scan;
  const p = s.presence;
  const b = (v: boolean | null) => (v === null ? null : v ? 1 : 0);
  return [newId(), s.hostname, s.url, s.scannedAt, Date.now(), s.country, s.platform, s.platformConfidence, s.pageType, s.grade, s.percentage, b(s.svcDetected), s.svcVersion,
    s.vertical, b(p.title), b(p.description), b(p.jsonLd), b(p.openGraph), b(p.h1), b(p.canonical), b(p.robots), JSON.stringify(s.signals), JSON.stringify(s.quality), JSON.stringify(s.data)];
});
const insert = raw.prepare(`INSERT INTO scans (id, hostname, url, scanned_at, received_at, country, platform, platform_confidence, page_type, grade, percentage, svc_detected, svc_version, vertical, has_title, has_description, has_json_ld, has_open_graph, has_h1, has_canonical, has_robots, signals, quality, data) VALUES (${rows[0]!.map(() => '?').join(',')})`);
const started = performance.now();
const cpu = measureCpu(process.pid);
raw.transaction(() => {
  for (const row of rows) insert.run(...(row as (string | number | null)[]));
})();
const rawRate = total / ((performance.now() - started) / 1000);
const rawCpu = { label: 'raw', use: cpu.stop(), count: total };
raw.close();
rmSync(rawDir, { recursive: true, force: true });

// (b) svc: the bulk endpoint over HTTP, batches sent one after another, on SQLite and (--postgres) on PostgreSQL.
async function throughSvc(env: Record<string, string>, label: string): Promise<{ rate: number; inserted: number; cpu: CpuSide }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-bulk-'));
  const config = loadConfig({ 'data-dir': dir, http: '127.0.0.1:0' }, { SVC_RATE_AGENT: '10000000', ...env });
  const key = createKey(dir, 'probe:scan', env);
  const server = await startServer(config);
  // The client's own work (encoding and signing each body) is done before the clock starts, as the
  // raw side's rows are built before its clock: client and server share this process's thread, and
  // only the server's work is measured. The timestamp stays well within the 5-minute window.
  const ts = String(Date.now());
  const requests = batches.map((json) => {
    const body = new TextEncoder().encode(json);
    return { body, signature: hmacSha256(key, [`${ts}.`, body], 'hex') };
  });
  let inserted = 0;
  const started = performance.now();
  const cpu = measureCpu(process.pid);
  for (const { body, signature } of requests) {
    const response = await fetch(`${server.url}/api/v1/probe/scan-bulk`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-probe-key': key, 'x-probe-timestamp': ts, 'x-probe-signature': signature },
    });
    if (response.status !== 200) throw new Error(`bulk answered ${response.status}: ${await response.text()}`);
    inserted += ((await response.json()) as { inserted: number }).inserted;
  }
  const rate = total / ((performance.now() - started) / 1000);
  const used = { label, use: cpu.stop(), count: total, note: 'the client, in this process, included' };
  await server.shutdown();
  rmSync(dir, { recursive: true, force: true });
  return { rate, inserted, cpu: used };
}
const onSqlite = await throughSvc({}, 'svc');
const bulkRate = onSqlite.rate;
const inserted = onSqlite.inserted;
const bulkCpu = onSqlite.cpu;
let onPostgres: Awaited<ReturnType<typeof throughSvc>> | null = null;
if (values.postgres) {
  const { adminUrl } = postgresServer(values['database-url']);
  onPostgres = await throughSvc({ SVC_DATABASE_URL: await newDatabase(adminUrl) }, 'svc on PostgreSQL');
}

console.log(`raw SQLite ceiling (prepared INSERT, one transaction, 2 indexes): ${Math.round(rawRate).toLocaleString('en')} scans/s`);
console.log(`svc bulk endpoint (HTTP, 1000-scan batches):          ${Math.round(bulkRate).toLocaleString('en')} scans/s (${inserted} inserted)`);
console.log(`ratio bulk / raw: ${(bulkRate / rawRate).toFixed(2)} (goal >= 0.6)`);
for (const line of cpuReport('scan', rawCpu, bulkCpu)) console.log(line);
if (onPostgres) {
  console.log(`svc bulk endpoint on PostgreSQL (same machine):      ${Math.round(onPostgres.rate).toLocaleString('en')} scans/s (${onPostgres.inserted} inserted); PostgreSQL/SQLite ${(onPostgres.rate / bulkRate).toFixed(2)}`);
  for (const line of cpuReport('scan', bulkCpu, onPostgres.cpu)) console.log(line);
}
