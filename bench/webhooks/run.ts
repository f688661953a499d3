#!/usr/bin/env bun
// Benchmark: signed platform-A products/update deliveries verified and applied per second by svc,
// beside a bare Bun.serve baseline measured in the same run. Usage: bun bench/webhooks/run.ts [seconds] [--cpu-prof DIR] [--vary]
// Needs wrk (apt-get install -y wrk). Each request carries a fresh X-Platform-A-Event-Id (unsigned
// header, as on the platform), so no delivery is deduplicated: every one is verified, logged and upserted.
// With SVC_DATABASE_URL set (an empty PostgreSQL database), svc runs on PostgreSQL.
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { platformAProduct } from '../../test/fakes/payloads.ts';
import { cleanupOnExit, createKey, requireWrk, resultRow, spawnServer, wrk } from '../lib/harness.ts';
import { cpuReport, measureCpu } from '../lib/thread-cpu.ts';

// `--cpu-prof DIR`: svc writes a CPU profile of the whole run into DIR when the bench ends.
// `--vary`: every delivery of a product brings a description and variant prices other than the one
// before it (by default a product comes back unchanged, as most stock-only updates do).
const { values: flags, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { 'cpu-prof': { type: 'string' }, vary: { type: 'boolean' } }, allowPositionals: true });
const SECONDS = Number(positionals[0] ?? 10);
const profileDir = flags['cpu-prof'];
const SHOP = 'bench.myplatform-a.com';
const APP_SECRET = 'bench-app-secret';
const PRODUCTS = 64;
/** Versions of each product cycled through with --vary (each differs from the one before it). */
const VERSIONS = flags.vary ? 16 : 1;
const BODIES = PRODUCTS * VERSIONS;

requireWrk();
const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-webhooks-'));
cleanupOnExit(work);

/** A wrk script cycling through signed ~3 KB bodies (distinct product ids) with a unique event id per request. */
function writeLuaScript(): { file: string; bytes: number } {
  const bodies = Array.from({ length: BODIES }, (_, i) => {
    const version = Math.floor(i / PRODUCTS);
    const product = platformAProduct(100_000 + (i % PRODUCTS), { updatedAt: '2026-01-10T10:00:00Z', ...(version > 0 && { price: `${80 + version}.00` }) });
    // Pad the description to the ~3 KB of a typical real product payload.
    const care = version > 0 ? `<p>Batch ${version}: wipe clean with a damp cloth; re-wax once a year.</p>` : '<p>Care: wipe clean with a damp cloth; re-wax once a year.</p>';
    return JSON.stringify({ ...product, body_html: product.body_html + care.repeat(10) });
  });
  const sigs = bodies.map((b) => createHmac('sha256', APP_SECRET).update(b).digest('base64'));
  const lua = `
local bodies = { ${bodies.map((b) => `[==[${b}]==]`).join(',\n')} }
local sigs = { ${sigs.map((s) => `"${s}"`).join(', ')} }
counter = 0
local thread_no = 0
prefix = "t"
function setup(thread)
  thread_no = thread_no + 1
  thread:set("prefix", "t" .. thread_no)
  -- Threads start half the bodies apart, so with --vary they rarely send the same version of a product at once.
  thread:set("counter", (thread_no - 1) * math.floor(#bodies / 2))
end
-- The run id (wrk argument) keeps event ids unique across the warm-up and measured runs.
function init(args)
  prefix = prefix .. "-" .. (args[1] or "0")
end
request = function()
  counter = counter + 1
  local i = (counter % #bodies) + 1
  local headers = {
    ["Content-Type"] = "application/json",
    ["X-Platform-A-Topic"] = "products/update",
    ["X-Platform-A-Shop-Domain"] = "${SHOP}",
    ["X-Platform-A-Hmac-Sha256"] = sigs[i],
    ["X-Platform-A-Event-Id"] = prefix .. "-" .. counter,
  }
  return wrk.format("POST", "/api/v1/webhooks/platform-a", headers, bodies[i])
end
`;
  const file = path.join(work, 'deliveries.lua');
  writeFileSync(file, lua);
  return { file, bytes: Math.round(bodies.reduce((n, b) => n + b.length, 0) / bodies.length) };
}

let runs = 0;
const run = (url: string, script: string, seconds: number) => wrk(url, seconds, { flags: ['-s', script], scriptArgs: [String(++runs)] });

/** A measured run with the server's CPU time over it: a figure other processes on the machine barely move. */
async function measured(url: string, pid: number) {
  const cpu = measureCpu(pid);
  const result = await run(url, script, SECONDS);
  return { ...result, cpu: cpu.stop() };
}

const dataDir = path.join(work, 'data');
const adminKey = createKey(dataDir, 'admin');
const profileFlags = profileDir ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
const { url: svcUrl, proc: svcProc } = await spawnServer([...profileFlags, 'src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], {
  SVC_PLATFORM_A_APP_SECRET: APP_SECRET,
  // wrk delivers from one address far faster than a platform does: the per-address webhook limit must not interfere.
  SVC_RATE_WEBHOOK: '10000000',
});
const store = await fetch(`${svcUrl}/api/v1/admin/stores`, {
  method: 'POST',
  headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({ platform: 'platform-a', domain: SHOP, currency: 'USD', credentials: { viaApp: true } }),
});
if (store.status !== 201) throw new Error(`store creation failed: ${store.status} ${await store.text()}`);
const { url: baselineUrl, proc: baselineProc } = await spawnServer(['bench/webhooks/baseline.ts']);

const { file: script, bytes } = writeLuaScript();
console.log(`webhook bench: wrk -t2 -c64 -d${SECONDS}s, signed platform-A products/update, ~${bytes} B body, unique event id per request${flags.vary ? ', description and prices changed on every delivery of a product' : ''}`);
await run(baselineUrl, script, 3); // warm-up
const baseline = await measured(baselineUrl, baselineProc.pid);
await run(svcUrl, script, 3);
const svc = await measured(svcUrl, svcProc.pid);

const OUTCOMES = 'SELECT outcome, count(*)::int AS deliveries, sum(duplicates)::int AS duplicates FROM webhook_deliveries GROUP BY outcome';
let outcomes: unknown[];
if (process.env.SVC_DATABASE_URL) {
  const sql = new SQL(process.env.SVC_DATABASE_URL);
  outcomes = [...(await sql.unsafe(OUTCOMES))];
  await sql.close();
} else {
  const db = new Database(path.join(dataDir, 'svc.db'), { readonly: true });
  outcomes = db.query(OUTCOMES.replaceAll('::int', '')).all();
  db.close();
}

console.log(resultRow('baseline (bare Bun.serve)', baseline));
console.log(resultRow('svc (verify + log + upsert)', svc));
console.log(`ratio svc/baseline: ${(svc.rps / baseline.rps).toFixed(3)}`);
for (const line of cpuReport('request', { label: 'baseline', use: baseline.cpu, count: baseline.requests }, { label: 'svc', use: svc.cpu, count: svc.requests })) console.log(line);
console.log(`delivery outcomes recorded by svc: ${JSON.stringify(outcomes)}`);
if (profileDir) {
  // The profile is written when svc exits on its own after SIGTERM.
  svcProc.kill('SIGTERM');
  await svcProc.exited;
  console.log(`svc CPU profile written to ${path.resolve(profileDir)}`);
}
process.exit(0);
