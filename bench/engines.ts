#!/usr/bin/env bun
// The storage engines side by side (issue 30 item 5): one `svc serve` on SQLite and one on
// PostgreSQL (a throwaway server from the system's binaries, on this machine; or --database-url,
// whose user may create databases), measured in one run with the same wrk settings, one after the
// other: signed telemetry (POST /api/v1/probe/telemetry, committed) and the public badge (a hot GET).
// Prints req/s, p50, p99 and each server's CPU per request, main thread first, and the main-thread
// ratio PostgreSQL/SQLite (target: telemetry within 1.3x). Figures, not assertions.
// With --all, the same run then measures the other hot paths on both engines with their own benches
// (each run once per engine, on a new database): bulk (bench/bulk.ts --postgres), signed webhooks
// (bench/webhooks/run.ts) and the public GETs (bench/signals/run.ts), and prints svc's main-thread
// CPU per request of each on both engines, with the ratio.
// Usage: bun bench/engines.ts [--duration 10] [--threads 2] [--connections 64] [--database-url URL] [--all]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { newDatabase, postgresServer, svcCli } from './lib/engine-setup.ts';
import { cleanupOnExit, requireWrk, ROOT, resultRow, spawnServer, wrk, writeSignedTelemetryScript, type WrkOptions, type WrkResult } from './lib/harness.ts';
import { measureCpu, type CpuUse } from './lib/thread-cpu.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    duration: { type: 'string', default: '10' },
    threads: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    'database-url': { type: 'string' },
    all: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.duration);
const options: WrkOptions = { threads: Number(values.threads), connections: Number(values.connections) };
requireWrk();

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
cleanupOnExit(work);
const { adminUrl, throwaway } = postgresServer(values['database-url']);

interface Measured {
  result: WrkResult;
  cpu: CpuUse | null;
}

/** wrk against `url` (2 s of warm-up, then SECONDS measured), with the server's CPU over the measured part. */
async function measure(pid: number, url: string, flags: string[] = []): Promise<Measured> {
  await wrk(url, 2, { ...options, flags });
  const cpu = measureCpu(pid);
  const result = await wrk(url, SECONDS, { ...options, flags });
  return { result, cpu: cpu.stop() };
}

const bodies = Array.from({ length: 64 }, (_, i) => JSON.stringify(scanReport(i, new Date().toISOString())));
const engines: Record<string, Record<string, Measured>> = {};
for (const engine of ['sqlite', 'postgres'] as const) {
  const env: Record<string, string> = { SVC_DATA_DIR: path.join(work, engine), SVC_RATE_AGENT: '10000000', SVC_RATE_ANONYMOUS: '1000000', SVC_RATE_ANONYMOUS_GLOBAL: '10000000' };
  if (engine === 'postgres') env.SVC_DATABASE_URL = await newDatabase(adminUrl);
  const key = svcCli(['keys', 'create', '--scopes', 'probe:scan', '--name', 'bench'], env).key as string;
  const svc = await spawnServer(['src/main.ts', 'serve', '--http', '127.0.0.1:0'], env);
  const script = path.join(work, `${engine}.lua`);
  writeSignedTelemetryScript(script, key, bodies);
  const telemetry = await measure(svc.proc.pid, `${svc.url}/api/v1/probe/telemetry`, ['-s', script]);
  const hostname = (JSON.parse(bodies[0]!) as { hostname: string }).hostname;
  const badge = await measure(svc.proc.pid, `${svc.url}/api/v1/public/probe/badge?domain=${hostname}`);
  engines[engine] = { telemetry, badge };
  svc.proc.kill('SIGTERM');
  await svc.proc.exited;
}

const micros = (m: Measured, pick: (cpu: CpuUse) => number) => (m.cpu ? (pick(m.cpu) / m.result.requests) * 1e6 : NaN);
console.log(`wrk -t${options.threads} -c${options.connections} -d${SECONDS}s; ${navigator.hardwareConcurrency} CPUs; PostgreSQL ${throwaway ? 'throwaway, on this machine' : 'at --database-url'}`);
for (const route of ['telemetry', 'badge'] as const) {
  for (const engine of ['sqlite', 'postgres'] as const) {
    const m = engines[engine]![route]!;
    console.log(`${resultRow(`${engine}, ${route}`, m.result)}   CPU per request: main thread ${micros(m, (c) => c.main).toFixed(1)} µs, all threads ${micros(m, (c) => c.all).toFixed(1)} µs`);
  }
  const ratio = micros(engines.postgres![route]!, (c) => c.main) / micros(engines.sqlite![route]!, (c) => c.main);
  console.log(`  ${route}: main-thread CPU per request, PostgreSQL/SQLite ${ratio.toFixed(2)}x${route === 'telemetry' ? ' (target <= 1.3x)' : ''}; throughput PostgreSQL/SQLite ${(engines.postgres![route]!.result.rps / engines.sqlite![route]!.result.rps).toFixed(2)}`);
}

if (values.all) {
  /** A bench run to its end with these settings; its output. */
  const benchOutput = (args: string[], env: Record<string, string> = {}): string => {
    // Its stderr (the log of an in-process server) only when it failed.
    const run = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
    if (run.exitCode !== 0) throw new Error(`bun ${args.join(' ')} exited with ${run.exitCode}: ${run.stderr.toString().slice(-2000)}`);
    return run.stdout.toString();
  };
  /** svc's main-thread CPU per request in a bench's report, by what it measured (a route's name line, `name: GET …`, starts each). */
  const svcMainThread = (output: string, first: string): Map<string, number> => {
    const figures = new Map<string, number>();
    let measuring = first;
    for (const line of output.split('\n')) {
      const named = /^(\S+): GET /.exec(line);
      if (named) measuring = named[1]!;
      const cpu = /CPU per request, svc\s*: main thread ([\d.]+) µs/.exec(line);
      if (cpu) figures.set(measuring, Number(cpu[1]));
    }
    return figures;
  };
  const bulk = benchOutput(['bench/bulk.ts', '--postgres', '--database-url', adminUrl]);
  console.log(`\nbulk (bench/bulk.ts --postgres):\n${bulk.split('\n').filter((line) => /scans\/s|svc\/svc|CPU per scan, svc/.test(line)).join('\n')}`);
  const others = [
    { args: ['bench/webhooks/run.ts', String(SECONDS)], first: 'webhook' },
    { args: ['bench/signals/run.ts', String(SECONDS), 'jsonld', 'llm', 'md', 'public-faqs', 'embed'], first: '' },
  ];
  for (const { args, first } of others) {
    const sqlite = svcMainThread(benchOutput(args), first);
    const postgres = svcMainThread(benchOutput(args, { SVC_DATABASE_URL: await newDatabase(adminUrl) }), first);
    for (const [name, onSqlite] of sqlite) {
      const onPostgres = postgres.get(name) ?? NaN;
      console.log(`${name}: svc's main-thread CPU per request, SQLite ${onSqlite.toFixed(1)} µs, PostgreSQL ${onPostgres.toFixed(1)} µs: PostgreSQL/SQLite ${(onPostgres / onSqlite).toFixed(2)}x`);
    }
  }
}
process.exit(0);
