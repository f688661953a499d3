#!/usr/bin/env bun
// svc's telemetry beside a minimal implementation of the same contract (issue 30 item 5): `svc serve`
// on SQLite (a fresh data directory, an agent key made by the CLI) and bench/minimal-telemetry/server.ts
// (the same key, loaded by its hash; the same GeoIP database, the test fixture svc's tests use), both
// sent the same mode-2 signed telemetry (64 realistic 1.5–3 KB scans) with wrk, taking turns in slices
// of about 2 s (`seconds` in all for each) so load that drifts during the run moves both alike. Then
// both are stopped and the scans each committed are counted in its database. Prints req/s, p50, p99,
// each server's CPU per request (main thread first) and the ratios svc/minimal (throughput) and
// minimal/svc (main-thread CPU; the aim: svc at or above the minimal server). Figures, not assertions.
// Needs wrk (apt-get install -y wrk).
// Usage: bun bench/minimal-telemetry/run.ts [seconds] [--threads 2] [--connections 64]
import { Database } from 'bun:sqlite';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sha256Hex } from '../../src/lib/crypto.ts';
import { TEST_GEO_NETWORKS } from '../../test/helpers/app.ts';
import { buildMmdb } from '../../test/helpers/mmdb.ts';
import { cleanupOnExit, createKey, requireWrk, resultRow, slicesOf, spawnServer, wrk, wrkAlternating, writeSignedTelemetryScript, type WrkOptions } from '../lib/harness.ts';
import { cpuReport, measureCpu } from '../lib/thread-cpu.ts';
import { scanReport } from '../scan-report.ts';

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), allowPositionals: true, options: { threads: { type: 'string', default: '2' }, connections: { type: 'string', default: '64' } } });
const SECONDS = Number(positionals[0] ?? 10);
const SLICE_SECONDS = 2;
const WARM_UP_SECONDS = 3;
// The script is signed once: warm-ups and every slice must fit in the 5-minute replay window.
if (!(SECONDS > 0 && 2 * (SECONDS + WARM_UP_SECONDS) < 270)) throw new Error('seconds: more than 0 and at most 130 (both servers must finish inside the 5-minute replay window)');
requireWrk();

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-minimal-'));
cleanupOnExit(work);
const geoip = path.join(work, 'test-geo.mmdb');
writeFileSync(geoip, buildMmdb(TEST_GEO_NETWORKS));
// Limits raised on both, so the buckets are taken from but never refuse.
const RATE = '10000000';

const dataDir = path.join(work, 'svc');
const key = createKey(dataDir, 'probe:scan');
const svc = await spawnServer(['src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], { SVC_GEOIP_DB: geoip, SVC_RATE_AGENT: RATE });
const keysFile = path.join(work, 'keys.json');
writeFileSync(keysFile, JSON.stringify([{ id: 'bench', keyHash: sha256Hex(key), scopes: ['probe:scan'] }]));
const minimalDb = path.join(work, 'minimal.db');
const minimal = await spawnServer(['bench/minimal-telemetry/server.ts', '--db', minimalDb, '--keys', keysFile, '--geoip', geoip, '--rate', RATE]);

const bodies = Array.from({ length: 64 }, (_, i) => JSON.stringify(scanReport(i, new Date().toISOString())));
const script = path.join(work, 'telemetry.lua');
writeSignedTelemetryScript(script, key, bodies);
const options: WrkOptions = { flags: ['-s', script], threads: Number(values.threads), connections: Number(values.connections) };
const targets = { minimal: { url: `${minimal.url}/api/v1/probe/telemetry`, options }, svc: { url: `${svc.url}/api/v1/probe/telemetry`, options } };

const warmUps = { minimal: await wrk(targets.minimal.url, WARM_UP_SECONDS, options), svc: await wrk(targets.svc.url, WARM_UP_SECONDS, options) };
// Each server receives only its own slices' requests, so its CPU over the whole alternation is theirs
// (and, for svc, its background work on the new scans: rollups, metrics).
const cpu = { minimal: measureCpu(minimal.proc.pid), svc: measureCpu(svc.proc.pid) };
const runs = await wrkAlternating(targets, SECONDS, SLICE_SECONDS);
const cpuUse = { minimal: cpu.minimal.stop(), svc: cpu.svc.stop() };

/** Stops a server (SIGTERM: it commits what it queued) and counts the scans in its database. */
async function committedScans(proc: Bun.Subprocess, file: string): Promise<number> {
  proc.kill('SIGTERM');
  await proc.exited;
  const db = new Database(file, { readonly: true });
  const { n } = db.query('SELECT count(*) AS n FROM scans').get() as { n: number };
  db.close();
  return n;
}
const committed = { minimal: await committedScans(minimal.proc, minimalDb), svc: await committedScans(svc.proc, path.join(dataDir, 'svc.db')) };

const slices = slicesOf(SECONDS, SLICE_SECONDS);
const sizes = bodies.map((b) => b.length);
console.log(
  `minimal-telemetry bench: wrk -t${options.threads} -c${options.connections}, ${SECONDS} s for each server in ${slices.length} rounds (${slices.join(' + ')} s) taking turns, after ${WARM_UP_SECONDS} s of warm-up each; ` +
    `bodies ${Math.min(...sizes)}–${Math.max(...sizes)} bytes; ${navigator.hardwareConcurrency} CPUs; p50 is the median of the slices', p99 the highest`,
);
for (const name of ['minimal', 'svc'] as const) {
  const answered = [warmUps[name], ...runs[name].slices].reduce((sum, r) => sum + r.requests - r.errors, 0);
  console.log(resultRow(name === 'svc' ? 'svc telemetry, signed, SQLite' : 'minimal telemetry, signed, SQLite', runs[name].total));
  console.log(`  scans committed: ${committed[name]} (wrk saw ${answered} answered without error, warm-up included; requests still in flight when wrk stopped are committed too)`);
}
const rounds = runs.svc.slices.map((slice, i) => slice.rps / runs.minimal.slices[i]!.rps);
const spread = rounds.length > 1 ? ` (rounds ${Math.min(...rounds).toFixed(3)}-${Math.max(...rounds).toFixed(3)})` : '';
console.log(`throughput ratio svc/minimal: ${(runs.svc.total.rps / runs.minimal.total.rps).toFixed(3)}${spread} (aim >= 1)`);
const cpuLines = cpuReport('request', { label: 'minimal', use: cpuUse.minimal, count: runs.minimal.total.requests }, { label: 'svc', use: cpuUse.svc, count: runs.svc.total.requests });
for (const line of cpuLines) console.log(line);
process.exit(0); // the exit hook removes the work directory
