#!/usr/bin/env bun
// The scan writes on each engine, side by side in one run (issue 30 item 5): the group-commit writer
// (src/telemetry/writer.ts) composed as the server composes it, over SQLite's records (always) and
// over PostgreSQL's (with --database-url), in this process, without HTTP. Telemetry: `--concurrency`
// writers each awaiting one scan at a time; bulk: requests of 1,000 scans. Prints scans/s and the
// CPU per scan of this process (main thread and all threads, bench/lib/thread-cpu.ts): the main
// thread's is what the writes add to a telemetry request's. Figures, not assertions; on a shared
// machine read the CPU, not the rate.
// The PostgreSQL side runs in a new database created on the URL's server (its user must be allowed
// to create one), dropped at the end.
// Usage: bun bench/scan-writes.ts [--database-url postgres://...] [--scans 40000] [--concurrency 64]
import { SQL } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { migrateDatabase, openDatabase } from '../src/storage/sqlite/db/index.ts';
import { migratePostgres } from '../src/storage/postgres/db/migrate.ts';
import { openPostgresClient } from '../src/storage/postgres/client.ts';
import { postgresScanStorage } from '../src/storage/postgres/scans.ts';
import { sqliteScanWriteRecordsSync } from '../src/storage/sqlite/scans.ts';
import { normalizeScan, type NormalizedScan } from '../src/telemetry/payload.ts';
import { createScanWriter, type ScanWriterStorage } from '../src/telemetry/writer.ts';
import { cpuReport, measureCpu, type CpuSide } from './lib/thread-cpu.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { 'database-url': { type: 'string', default: process.env.SVC_DATABASE_URL }, scans: { type: 'string', default: '40000' }, concurrency: { type: 'string', default: '64' } },
});
const SCANS = Number(values.scans);
const CONCURRENCY = Number(values.concurrency);
const BULK = 1000;
const START = Date.now() - 86_400_000;

/** Realistic scans (bench/scan-report.ts), normalized as the endpoints store them. */
const scans: NormalizedScan[] = Array.from({ length: SCANS }, (_, i) => {
  const result = normalizeScan(scanReport(i, new Date(START + i).toISOString()), Date.now());
  if (!result.ok) throw new Error(result.detail);
  return result.scan;
});

interface Engine {
  name: string;
  storage: ScanWriterStorage;
  close(): Promise<void>;
}

async function sqlite(): Promise<Engine> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-writes-'));
  const database = openDatabase(path.join(dir, 'svc.db'));
  migrateDatabase(database);
  return {
    name: 'sqlite',
    storage: sqliteScanWriteRecordsSync(database),
    close: async () => {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgres(url: string): Promise<Engine> {
  const admin = new SQL({ url, max: 1 });
  const name = `svc_bench_${crypto.randomUUID().replaceAll('-', '')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  await migratePostgres(target.toString());
  const client = openPostgresClient(target.toString());
  return {
    name: 'postgres',
    storage: postgresScanStorage(client, { wrote: () => {} }).writes,
    close: async () => {
      await client.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    },
  };
}

/** Every scan through `writer`: telemetry (one scan per write, CONCURRENCY at a time) or bulk (BULK per write). */
async function drive(engine: Engine, kind: 'telemetry' | 'bulk'): Promise<CpuSide & { seconds: number }> {
  const writer = createScanWriter(engine.storage);
  const cpu = measureCpu(process.pid);
  const started = performance.now();
  if (kind === 'bulk') {
    const requests = [];
    for (let i = 0; i < SCANS; i += BULK) requests.push(writer.writeBulk(scans.slice(i, i + BULK), Date.now()));
    await Promise.all(requests);
  } else {
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < SCANS) await writer.write(scans[next++]!, Date.now());
    }));
  }
  const seconds = (performance.now() - started) / 1000;
  const use = cpu.stop();
  await writer.close();
  return { label: `${kind} ${engine.name}`, use, count: SCANS, seconds };
}

console.log(`${SCANS} scans; telemetry ${CONCURRENCY} writers at a time, bulk ${BULK} per request; ${navigator.hardwareConcurrency} CPUs`);
const url = values['database-url'];
if (!url) console.log('PostgreSQL: not run (give --database-url or SVC_DATABASE_URL)');
for (const kind of ['telemetry', 'bulk'] as const) {
  const sides: (CpuSide & { seconds: number })[] = [];
  for (const open of [sqlite, ...(url ? [() => postgres(url)] : [])]) {
    const engine = await open();
    try {
      sides.push(await drive(engine, kind));
    } finally {
      await engine.close();
    }
  }
  for (const side of sides) console.log(`${side.label}: ${Math.round(side.count / side.seconds)} scans/s`);
  const [first, ...rest] = sides;
  for (const line of cpuReport('scan', first!, ...rest)) console.log(line);
}
