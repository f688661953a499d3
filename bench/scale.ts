#!/usr/bin/env bun
// Many instances (issue 31 item 6): signed telemetry against svc on SQLite (one instance, the
// baseline), on PostgreSQL with in-process limits, and on PostgreSQL + Redis with 1, 2 and 3
// instances sharing one database (throwaway PostgreSQL and redis-server from the system's binaries,
// or --database-url). The load generator spreads the connections: one wrk per instance, all at once,
// as a load balancer would. Prints total req/s and, per instance, the main thread's CPU per request,
// then what PostgreSQL's and Redis's processes spent per request: the figures docs/scaling.md's
// capacity model is built from. On a 2-core machine more instances cannot add throughput (they share
// the cores with wrk and PostgreSQL); the CPU per request is the figure that carries to larger ones.
// Usage: bun bench/scale.ts [--duration 10] [--connections 64] [--instances 1,2,3] [--database-url URL]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startThrowawayRedis } from '../scripts/redis-throwaway.ts';
import { newDatabase, postgresServer, svcCli } from './lib/engine-setup.ts';
import { cleanupOnExit, requireWrk, resultRow, spawnServer, wrk, writeSignedTelemetryScript, type WrkResult } from './lib/harness.ts';
import { measureCpu, measureCpuByName, type CpuUse } from './lib/thread-cpu.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '64' }, instances: { type: 'string', default: '1,2,3' }, 'database-url': { type: 'string' } },
});
const SECONDS = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const COUNTS = values.instances.split(',').map(Number);
requireWrk();

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
cleanupOnExit(work);
const { adminUrl, throwaway } = postgresServer(values['database-url']);
const redis = await startThrowawayRedis();
process.on('exit', () => redis.removeNow());

interface Configuration {
  label: string;
  engine: 'sqlite' | 'postgres';
  redis: boolean;
  instances: number;
}
const configurations: Configuration[] = [
  { label: 'SQLite, 1 instance', engine: 'sqlite', redis: false, instances: 1 },
  { label: 'PostgreSQL, 1 instance, in-process limits', engine: 'postgres', redis: false, instances: 1 },
  ...COUNTS.map((instances) => ({ label: `PostgreSQL + Redis, ${instances} instance${instances > 1 ? 's' : ''}`, engine: 'postgres' as const, redis: true, instances })),
];

interface Run {
  configuration: Configuration;
  total: WrkResult;
  perInstance: { result: WrkResult; cpu: CpuUse | null }[];
  postgresSeconds: number;
  redisSeconds: number;
}

const bodies = Array.from({ length: 64 }, (_, i) => JSON.stringify(scanReport(i, new Date().toISOString())));

async function measure(configuration: Configuration): Promise<Run> {
  const env: Record<string, string> = { SVC_RATE_AGENT: '10000000' };
  if (configuration.engine === 'postgres') env.SVC_DATABASE_URL = await newDatabase(adminUrl);
  if (configuration.redis) env.SVC_REDIS_URL = redis.url;
  const dataDir = (n: number) => path.join(work, `${configuration.label.replace(/\W+/g, '-')}-${n}`);
  const key = svcCli(['keys', 'create', '--scopes', 'probe:scan', '--name', 'bench', '--data-dir', dataDir(0)], env).key as string;
  const servers: Awaited<ReturnType<typeof spawnServer>>[] = [];
  for (let n = 0; n < configuration.instances; n++) servers.push(await spawnServer(['src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', dataDir(n)], env));
  const script = path.join(work, 'telemetry.lua');
  writeSignedTelemetryScript(script, key, bodies);
  // One wrk per instance, the connections split between them (one wrk thread each: the cores are few).
  const options = { threads: 1, connections: Math.max(1, Math.round(CONNECTIONS / servers.length)), flags: ['-s', script] };
  const load = (seconds: number) => Promise.all(servers.map((server) => wrk(`${server.url}/api/v1/probe/telemetry`, seconds, options)));
  await load(2);
  const cpus = servers.map((server) => measureCpu(server.proc.pid));
  const postgres = measureCpuByName('postgres');
  const redisCpu = measureCpuByName('redis-server');
  const results = await load(SECONDS);
  const perInstance = results.map((result, n) => ({ result, cpu: cpus[n]!.stop() }));
  const postgresSeconds = postgres.stop();
  const redisSeconds = redisCpu.stop();
  for (const server of servers) {
    server.proc.kill('SIGTERM');
    await server.proc.exited;
  }
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const total: WrkResult = {
    rps: results.reduce((sum, r) => sum + r.rps, 0),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    requests,
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  };
  return { configuration, total, perInstance, postgresSeconds: configuration.engine === 'postgres' ? postgresSeconds : NaN, redisSeconds: configuration.redis ? redisSeconds : NaN };
}

const runs: Run[] = [];
for (const configuration of configurations) runs.push(await measure(configuration));

const micros = (seconds: number, requests: number) => ((seconds / requests) * 1e6).toFixed(1);
const [load1] = (await Bun.file('/proc/loadavg').text().catch(() => 'n/a')).split(' ');
console.log(`signed telemetry; ${CONNECTIONS} connections split over one wrk (-t1) per instance; -d${SECONDS}s; ${navigator.hardwareConcurrency} CPUs; load average before the last run ${load1}; PostgreSQL ${throwaway ? 'throwaway, on this machine' : 'at --database-url'}; Redis throwaway, on this machine`);
console.log('(max p50/p99 over the instances)');
const baseline = runs[0]!;
const mainPerRequest = (run: Run) => run.perInstance.reduce((sum, side) => sum + (side.cpu?.main ?? NaN), 0) / run.total.requests;
for (const run of runs) {
  console.log(resultRow(run.configuration.label, run.total));
  const instances = run.perInstance.map((side, n) => `#${n + 1} ${side.result.rps.toFixed(0)} req/s, main thread ${side.cpu ? micros(side.cpu.main, side.result.requests) : 'n/a'} µs, all threads ${side.cpu ? micros(side.cpu.all, side.result.requests) : 'n/a'} µs`);
  console.log(`  per instance: ${instances.join('; ')}`);
  const servers = [Number.isFinite(run.postgresSeconds) ? `PostgreSQL ${micros(run.postgresSeconds, run.total.requests)} µs` : null, Number.isFinite(run.redisSeconds) ? `Redis ${micros(run.redisSeconds, run.total.requests)} µs` : null].filter(Boolean);
  if (servers.length) console.log(`  per request, the shared servers' CPU: ${servers.join(', ')}`);
  console.log(`  main-thread CPU per request vs ${baseline.configuration.label}: ${(mainPerRequest(run) / mainPerRequest(baseline)).toFixed(2)}x; throughput ${(run.total.rps / baseline.total.rps).toFixed(2)}x`);
}
process.exit(0);
