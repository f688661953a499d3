#!/usr/bin/env bun
// Telemetry ingestion benchmark (README "Benchmarks"): one command, two servers, the same wrk settings.
//   (a) bench/bare-server.ts: Bun.serve that parses the JSON body and answers 204
//   (b) svc serve: POST /api/v1/probe/telemetry, mode-2 signed, committed to a real SQLite file
// Prints req/s, p50 and p99 of each and the ratios b/a. Figures, not assertions.
// Usage: bun bench/ingest.ts [--duration 10] [--threads 2] [--connections 64]
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { hmacSha256 } from '../src/lib/crypto.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { duration: { type: 'string', default: '10' }, threads: { type: 'string', default: '2' }, connections: { type: 'string', default: '64' } },
});
const WRK = ['-t', values.threads!, '-c', values.connections!, '-d', `${values.duration}s`, '--latency'];
const BODIES = 64;

if (!Bun.which('wrk')) {
  console.error('bench/ingest: wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)');
  process.exit(2);
}

/** A realistic 1.5–3 KB scan report, as the browser extension sends it (ASCII only, so it embeds in Lua as is). */
function scanReport(i: number): string {
  return JSON.stringify({
    url: `https://shop-${i % 16}.example.com/products/organic-green-tea-${i}`,
    hostname: `shop-${i % 16}.example.com`,
    scannedAt: new Date().toISOString(),
    platform: { platform: 'platform-a', confidence: 0.94 },
    pageType: 'product',
    svc: { detected: i % 3 === 0, version: '1.4.2' },
    signals: {
      title: { value: 'Organic Green Tea - Loose Leaf, 100 g | Example Tea Shop', length: 56 },
      description: { value: 'Hand-picked organic green tea from small farms. Fresh, grassy and sweet, with free shipping over 40 EUR and a 30-day return policy.', length: 131 },
      canonical: { value: `https://shop-${i % 16}.example.com/products/organic-green-tea-${i}` },
      robots: 'index,follow,max-image-preview:large',
      lang: 'en',
      headings: { h1: ['Organic Green Tea'], h2: ['Description', 'Brewing guide', 'Reviews', 'You may also like'] },
      openGraph: { 'og:title': 'Organic Green Tea', 'og:type': 'product', 'og:image': 'https://cdn.example.com/img/green-tea-1200.jpg', 'og:price:amount': '12.90', 'og:price:currency': 'EUR' },
      jsonLd: [
        { '@context': 'https://schema.org', '@type': 'Product', name: 'Organic Green Tea', sku: `GT-${1000 + i}`, brand: { '@type': 'Brand', name: 'Example Tea' },
          offers: { '@type': 'Offer', price: '12.90', priceCurrency: 'EUR', availability: 'https://schema.org/InStock' },
          aggregateRating: { '@type': 'AggregateRating', ratingValue: '4.7', reviewCount: '213' } },
        { '@context': 'https://schema.org', '@type': 'BreadcrumbList', itemListElement: [
          { '@type': 'ListItem', position: 1, name: 'Tea', item: 'https://shop.example.com/collections/tea' },
          { '@type': 'ListItem', position: 2, name: 'Green tea', item: 'https://shop.example.com/collections/green-tea' } ] },
      ],
    },
    signalPresence: { title: true, description: true, jsonLd: true, openGraph: true, h1: true, canonical: true, robots: true },
    quality: { grade: 'B', percentage: 82, title: 9, description: 8, keywords: 5, jsonLd: 9, openGraph: 8 },
    vertical: 'food-and-drink',
    extensionVersion: '3.8.1',
    timings: { extractMs: 41, totalMs: 63 },
  });
}

async function start(command: string[], env: Record<string, string>): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  const proc = Bun.spawn(command, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdout: 'pipe', stderr: 'ignore' });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`${command.join(' ')} exited before listening`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: JSON.parse(text.split('\n')[0]!).url, proc };
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: string;
}

const toMs = (value: string, unit: string) => Number(value) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit]!;

function parseWrk(output: string): Figures {
  const latency = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN),
    p50: latency('50'),
    p99: latency('99'),
    requests: Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0),
    errors: /Socket errors:.*/.exec(output)?.[0] ?? 'none',
  };
}

async function wrk(url: string, script: string, seconds?: number): Promise<Figures> {
  const args = seconds ? ['-t', values.threads!, '-c', values.connections!, '-d', `${seconds}s`, '--latency'] : WRK;
  const proc = Bun.spawn(['wrk', ...args, '-s', script, url], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`wrk failed: ${err}`);
  return parseWrk(out);
}

const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
const running: ReturnType<typeof Bun.spawn>[] = [];
try {
  // svc: a fresh data directory, an agent key, limits raised so the bucket never interferes.
  const created = Bun.spawnSync([process.execPath, 'src/main.ts', 'keys', 'create', '--scopes', 'probe:scan', '--data-dir', work], { cwd: ROOT });
  if (created.exitCode !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  const key: string = JSON.parse(created.stdout.toString()).key;

  // Signed at start: the 5-minute replay window comfortably covers the whole run.
  const timestamp = String(Date.now());
  const bodies = Array.from({ length: BODIES }, (_, i) => scanReport(i));
  const signatures = bodies.map((body) => hmacSha256(key, `${timestamp}.${body}`, 'hex'));
  const script = path.join(work, 'telemetry.lua');
  writeFileSync(
    script,
    `-- generated by bench/ingest.ts
local key = "${key}"
local ts = "${timestamp}"
local bodies = { ${bodies.map((b) => JSON.stringify(b)).join(',\n')} }
local sigs = { ${signatures.map((s) => JSON.stringify(s)).join(', ')} }
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json", ["X-Probe-Key"] = key,
    ["X-Probe-Timestamp"] = ts, ["X-Probe-Signature"] = sigs[i] }, bodies[i])
end
`,
  );
  const sizes = bodies.map((b) => b.length);
  console.log(`body ${Math.min(...sizes)}–${Math.max(...sizes)} bytes; wrk ${WRK.join(' ')}; ${navigator.hardwareConcurrency} CPUs`);

  const bare = await start([process.execPath, 'bench/bare-server.ts'], {});
  running.push(bare.proc);
  const svc = await start([process.execPath, 'src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', work], {
    SVC_RATE_AGENT: '10000000',
  });
  running.push(svc.proc);
  const target = `${svc.url}/api/v1/probe/telemetry`;

  await wrk(bare.url, script, 2); // warm-up
  const a = await wrk(bare.url, script);
  await wrk(target, script, 2);
  const b = await wrk(target, script);

  const row = (name: string, f: Figures) =>
    `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)}   ${f.requests} requests, ${f.non2xx} non-2xx, socket errors: ${f.errors.replace('Socket errors: ', '')}`;
  console.log(`${'server'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
  console.log(row('(a) bare Bun.serve + JSON, 204', a));
  console.log(row('(b) svc telemetry, signed, SQLite', b));
  console.log(`ratio b/a: throughput ${(b.rps / a.rps).toFixed(2)} (goal >= 0.7), p99 ${(b.p99 / a.p99).toFixed(2)}x (goal <= 2)`);

  svc.proc.kill('SIGTERM'); // graceful: flushes the writer
  await svc.proc.exited;
  const db = new Database(path.join(work, 'svc.db'), { readonly: true });
  console.log(`rows committed by svc: ${(db.query('SELECT count(*) AS n FROM scans').get() as { n: number }).n} (warm-up included)`);
  db.close();
} finally {
  for (const proc of running) proc.kill('SIGTERM');
  await Promise.all(running.map((p) => p.exited));
  rmSync(work, { recursive: true, force: true });
}
