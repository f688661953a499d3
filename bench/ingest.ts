#!/usr/bin/env bun
// Telemetry ingestion benchmark (README "Benchmarks"): one command, two servers, the same wrk settings.
//   (a) bench/bare-server.ts: Bun.serve that parses the JSON body and answers 204
//   (b) svc serve: POST /api/v1/probe/telemetry, mode-2 signed, committed to a real SQLite file
// Prints req/s, p50 and p99 of each and the ratios b/a. Figures, not assertions.
// With --backlog N: then (c) the same svc restarted over its database plus N older scans not yet
// rolled up (issue 12, item 5), so the roller folds that backlog while wrk runs; prints (c) and c/a.
// Also prints each server's CPU per request (main thread and all threads, bench/lib/thread-cpu.ts).
// Usage: bun bench/ingest.ts [--duration 10] [--threads 2] [--connections 64] [--backlog 1000000] [--cpu-prof DIR]
// `--cpu-prof DIR`: each svc process writes a CPU profile (.cpuprofile) into DIR when it exits.
import { Database } from 'bun:sqlite';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/storage/sqlite/db/index.ts';
import { cleanupOnExit, createKey, requireWrk, spawnServer, wrk, writeSignedTelemetryScript, type WrkOptions, type WrkResult } from './lib/harness.ts';
import { generateScans } from './lib/scans.ts';
import { cpuReport, measureCpu } from './lib/thread-cpu.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { duration: { type: 'string', default: '10' }, threads: { type: 'string', default: '2' }, connections: { type: 'string', default: '64' }, backlog: { type: 'string', default: '0' }, 'cpu-prof': { type: 'string' } },
});
const SECONDS = Number(values.duration);
const BODIES = 64;
const BACKLOG = Number(values.backlog);

requireWrk();

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
cleanupOnExit(work);
// svc: a fresh data directory, an agent key, limits raised so the bucket never interferes.
const key = createKey(work, 'probe:scan');
const metricsKey = createKey(work, 'metrics:read');

const bodies = Array.from({ length: BODIES }, (_, i) => JSON.stringify(scanReport(i, new Date().toISOString())));
const script = path.join(work, 'telemetry.lua');
/** The wrk script, signed now: the 5-minute replay window comfortably covers one run. */
const writeScript = () => writeSignedTelemetryScript(script, key, bodies);
writeScript();
const sizes = bodies.map((b) => b.length);
const options: WrkOptions = { flags: ['-s', script], threads: Number(values.threads), connections: Number(values.connections) };
console.log(`body ${Math.min(...sizes)}–${Math.max(...sizes)} bytes; wrk -t${options.threads} -c${options.connections} -d${SECONDS}s; ${navigator.hardwareConcurrency} CPUs`);

const bare = await spawnServer(['bench/bare-server.ts']);
const profileFlags = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`] : [];
const serveSvc = () => spawnServer([...profileFlags, 'src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', work], { SVC_RATE_AGENT: '10000000' });
const svc = await serveSvc();
const target = `${svc.url}/api/v1/probe/telemetry`;

await wrk(bare.url, 2, options); // warm-up
let cpu = measureCpu(bare.proc.pid);
const a = await wrk(bare.url, SECONDS, options);
const cpuA = { label: 'a', use: cpu.stop(), count: a.requests };
await wrk(target, 2, options);
const wal = walWatch(path.join(work, 'svc.db-wal'));
cpu = measureCpu(svc.proc.pid);
const b = await wrk(target, SECONDS, options);
const cpuB = { label: 'b', use: cpu.stop(), count: b.requests };
wal.stop();
const restarts = await walRestarts(svc.url);

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
/** The largest size of the WAL file while wrk runs (sampled every 50 ms), and the last. */
function walWatch(file: string) {
  const watch = { largest: 0, last: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    watch.last = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    watch.largest = Math.max(watch.largest, watch.last);
  }, 50);
  return watch;
}
/** The WAL restarts of the server and its longest write pause, from its /metrics. */
async function walRestarts(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsKey}` } })).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return `${value('svc_wal_restarts_total')} restarts, longest pause of the group commits ${(value('svc_wal_pause_longest_seconds') * 1000).toFixed(1)} ms`;
}

const row = (name: string, f: WrkResult) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)}   ${f.requests} requests, ${f.errors} non-2xx/errors`;
console.log(`${'server'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
console.log(row('(a) bare Bun.serve + JSON, 204', a));
console.log(row('(b) svc telemetry, signed, SQLite', b));
console.log(`ratio b/a: throughput ${(b.rps / a.rps).toFixed(2)} (goal >= 0.5), p99 ${(b.p99 / a.p99).toFixed(2)}x (goal <= 3x)`);
for (const line of cpuReport('request', cpuA, cpuB)) console.log(line);
console.log(`(b) WAL file: largest ${mb(wal.largest)}, at the end ${mb(wal.last)}; ${restarts}`);

svc.proc.kill('SIGTERM'); // graceful: flushes the writer
await svc.proc.exited;
const file = path.join(work, 'svc.db');
const db = new Database(file, { readonly: true });
console.log(`rows committed by svc: ${(db.query('SELECT count(*) AS n FROM scans').get() as { n: number }).n} (warm-up included)`);
db.close();

if (BACKLOG > 0) {
  const database = openDatabase(file);
  let started = performance.now();
  generateScans(database.sqlite, BACKLOG, Date.now());
  database.close();
  console.log(`backlog: ${BACKLOG.toLocaleString('en')} older scans added above the rollup watermark in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  writeScript();
  const loaded = await serveSvc();
  started = performance.now();
  await wrk(`${loaded.url}/api/v1/probe/telemetry`, 2, options);
  cpu = measureCpu(loaded.proc.pid);
  const c = await wrk(`${loaded.url}/api/v1/probe/telemetry`, SECONDS, options);
  const cpuC = { label: 'c', use: cpu.stop(), count: c.requests };
  const seconds = (performance.now() - started) / 1000;
  const reader = new Database(file, { readonly: true });
  const state = reader.query('SELECT watermark FROM scan_rollup_state').get() as { watermark: number };
  const left = (reader.query('SELECT count(*) AS n FROM scans WHERE rowid > ?').get(state.watermark) as { n: number }).n;
  reader.close();
  loaded.proc.kill('SIGTERM');
  await loaded.proc.exited;
  console.log(row('(c) svc telemetry, backlog rolling', c));
  console.log(`ratio c/a: throughput ${(c.rps / a.rps).toFixed(2)}, p99 ${(c.p99 / a.p99).toFixed(2)}x (goal <= 3x); p99 with/without the backlog ${(c.p99 / b.p99).toFixed(2)}x; ${left.toLocaleString('en')} scans still to roll up after ${seconds.toFixed(0)} s`);
  for (const line of cpuReport('request', cpuA, cpuC)) console.log(line);
}
if (values['cpu-prof']) console.log(`svc CPU profile written to ${path.resolve(values['cpu-prof'])}`);
process.exit(0); // the exit hook stops the bare server and removes the data directory
