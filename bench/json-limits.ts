#!/usr/bin/env bun
// Bounded-parsing benchmark (issue 11, item 1): how long svc's event loop is held while it answers
// the attack bodies — a 400 KB telemetry body nested 200,000 deep, and a ~15 MiB bulk body whose one
// item holds 1.7M keys — sent with a lead token over real HTTP to a spawned `svc serve`. While each
// attack request runs, a second client sends GET /healthz back to back; the slowest of those answers
// is the longest the loop was held (give or take the round trip). Baseline, measured in the same
// run: a plain JSON.parse of the same bytes, the least the loop was held when the whole body was
// parsed at once. A realistic 1000-scan batch is measured too (its hold includes the group commit).
// Usage: bun bench/json-limits.ts [--runs 3]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, cleanupOnExit, spawnServer } from './lib/harness.ts';
import { scanReport } from './scan-report.ts';

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: 'string', default: '3' } } });
const RUNS = Number(values.runs);

const nested = '['.repeat(200_000) + ']'.repeat(200_000);
const manyKeys = Array.from({ length: 1_700_000 }, (_, i) => `"${i.toString(36)}":0`).join(',');
const start = Date.now() - 86_400_000;
const cases = [
  { name: 'telemetry, nested 200,000 deep', path: '/api/v1/probe/telemetry', body: `{"hostname":"shop.example.com","signals":{"x":${nested}}}` },
  { name: 'bulk, one item with 1.7M keys', path: '/api/v1/probe/scan-bulk', body: `{"scans":[{"hostname":"shop.example.com","signals":{},"extra":{${manyKeys}}}]}` },
  {
    name: 'bulk, 1000 ordinary scans (baseline traffic)',
    path: '/api/v1/probe/scan-bulk',
    body: JSON.stringify({ scans: Array.from({ length: 1000 }, (_, i) => scanReport(i, new Date(start + i).toISOString())) }),
  },
];

function parseTime(body: string): number {
  const started = performance.now();
  try {
    JSON.parse(body);
  } catch {
    // The nested body throws (call stack) after the time it took; that time is the figure.
  }
  return performance.now() - started;
}
// Baselines first, in this process, so their garbage is collected before anything is timed.
const baselines = cases.map(({ body }) => Math.min(...Array.from({ length: RUNS }, () => parseTime(body))));
Bun.gc(true);

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-json-limits-'));
cleanupOnExit(work);
const created = Bun.spawnSync([process.execPath, 'src/main.ts', 'leads', 'create', '--email', 'scanner@example.com', '--verified', '--data-dir', work], { cwd: ROOT });
if (created.exitCode !== 0) throw new Error(`leads create failed: ${created.stderr}`);
const token: string = JSON.parse(created.stdout.toString()).apiToken;
const svc = await spawnServer(['src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', work], { SVC_RATE_AUTHED: '1000000', SVC_ACCESS_LOG: 'off' });

/** Slowest GET /healthz, sent back to back, while `work` runs (ms). */
async function slowestProbe<T>(work: Promise<T>): Promise<{ result: T; slowest: number }> {
  let finished = false;
  let slowest = 0;
  const probing = (async () => {
    while (!finished) {
      const started = performance.now();
      await (await fetch(`${svc.url}/healthz`)).arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
    }
  })();
  const result = await work.finally(() => (finished = true));
  await probing;
  return { result, slowest };
}

const idle = await slowestProbe(Bun.sleep(500));
console.log(`${RUNS} runs per body; slowest /healthz with no other traffic: ${idle.slowest.toFixed(1)} ms`);
for (const [index, { name, path: route, body }] of cases.entries()) {
  let hold = 0;
  let total = 0;
  let status = 0;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const measured = await slowestProbe(
      fetch(svc.url + route, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-probe-token': token } }).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      }),
    );
    total = Math.max(total, performance.now() - started);
    hold = Math.max(hold, measured.slowest);
    status = measured.result;
  }
  const parse = baselines[index]!;
  const mib = (body.length / 1024 / 1024).toFixed(1);
  console.log(`${name} (${mib} MiB): status ${status}, answered within ${total.toFixed(0)} ms; slowest /healthz meanwhile ${hold.toFixed(1)} ms; baseline JSON.parse ${parse.toFixed(1)} ms; ratio ${(hold / parse).toFixed(3)}`);
}
svc.proc.kill();
