#!/usr/bin/env bun
// Benchmark: every public GET of issue 12 item 3 per second (a realistic enriched product with FAQs as
// .jsonld, .llm, .md and .meta; the widget's public FAQ endpoint, key + origin checked on every request;
// /embed.js; the badge of a scanned host), each beside two bare Bun.serve baselines in the same run:
// one answering the same response (status, body and svc's response headers, with an X-Request-Id made
// per request as svc makes it), which is the goal's measure, and one answering the same body with its
// content headers only. The three take turns in slices of about 2 s (`seconds` in all for each), so
// load that drifts during the run moves all three alike; ratios are of the summed slices, with the
// spread of the per-round ratios beside them, and the CPU per request of svc and the same-response
// baseline (main thread and all threads; their main-thread ratio moves least with other load). Needs wrk (apt-get install -y wrk).
// Usage: bun bench/signals/run.ts [seconds] [name...]   (names: jsonld llm md meta public-faqs embed badge)
// SVC_BENCH_CPU_PROF=DIR writes svc's CPU profile (.cpuprofile) to DIR when the bench ends. With
// SVC_DATABASE_URL set (an empty PostgreSQL database), svc runs on PostgreSQL.
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { platformAProduct } from '../../test/fakes/payloads.ts';
import { scanPayload } from '../../test/helpers/probe.ts';
import { cleanupOnExit, createKey, requireWrk, resultRow, slicesOf, spawnServer, wrk, wrkAlternating, type AlternatingResult } from '../lib/harness.ts';
import { cpuReport, measureCpu } from '../lib/thread-cpu.ts';

const SECONDS = Number(Bun.argv[2] ?? 10);
const SLICE_SECONDS = 2;
const WARM_UP_SECONDS = 3;
const ONLY = Bun.argv.slice(3);
const PROFILE_DIR = process.env.SVC_BENCH_CPU_PROF;
const SHOP = 'bench.myplatform-a.com';
const APP_SECRET = 'bench-app-secret';
const PRODUCT_ID = 424242;
const ORIGIN = 'https://www.bench-shop.test';

requireWrk();
const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-signals-'));
cleanupOnExit(work);

const dataDir = path.join(work, 'data');
const adminKey = createKey(dataDir, 'admin');
const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILE_DIR)}`] : [];
const { url: svcUrl, proc: svcProc } = await spawnServer([...profile, 'src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], { SVC_PLATFORM_A_APP_SECRET: APP_SECRET });

async function call(method: string, route: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(`${svcUrl}${route}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}`, ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

// A store of svc's app, its product synced by a signed webhook, enriched, with five approved FAQs.
const store = await call('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: SHOP, currency: 'USD', credentials: { viaApp: true } });
const payload = JSON.stringify(platformAProduct(PRODUCT_ID));
await call('POST', '/api/v1/webhooks/platform-a', JSON.parse(payload), {
  'X-Platform-A-Topic': 'products/update',
  'X-Platform-A-Shop-Domain': SHOP,
  'X-Platform-A-Hmac-Sha256': createHmac('sha256', APP_SECRET).update(JSON.stringify(JSON.parse(payload))).digest('base64'),
  'X-Platform-A-Event-Id': 'bench-1',
});
await call('PUT', `/api/v1/admin/stores/${store.id}/products/${PRODUCT_ID}/enrichment`, {
  summary: 'A waxed canvas tote that carries a laptop and shrugs off rain.',
  highlights: ['Water resistant', 'Leather handles', 'Fits 15-inch laptops'],
  attributes: { Material: 'Waxed canvas', Origin: 'Portugal', Weight: '900 g' },
});
for (let i = 1; i <= 5; i++) {
  await call('POST', '/api/v1/admin/faqs', { storeId: store.id, entityType: 'product', entityRef: String(PRODUCT_ID), question: `Question ${i}?`, answer: `<p>Answer ${i} with <strong>detail</strong>.</p>`, status: 'approved', position: i });
}
const widgetKey = (await call('POST', '/api/v1/admin/keys', { name: 'bench widget', scopes: ['products:read'], allowedDomains: ['www.bench-shop.test'], storeId: store.id })).key as string;
// One committed scan of the shop's host, so the badge shows a real score.
const lead = await call('POST', '/api/v1/public/leads', { email: 'bench@example.com' });
const scan = await fetch(`${svcUrl}/api/v1/probe/telemetry`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': lead.apiToken }, body: JSON.stringify(scanPayload({ hostname: 'www.bench-shop.test' })) });
if (scan.status !== 204) throw new Error(`telemetry: ${scan.status} ${await scan.text()}`);

interface Case {
  name: string;
  route: string;
  /** wrk flags: request headers. */
  flags: string[];
  /** What the answer must contain, so a bench never measures an error page. */
  expect: string;
}
const product = (format: string) => `/api/v1/platform-a/products/${PRODUCT_ID}.${format}`;
const CASES: Case[] = [
  { name: 'jsonld', route: product('jsonld'), flags: [], expect: '"Product"' },
  { name: 'llm', route: product('llm'), flags: [], expect: 'Question 5?' },
  { name: 'md', route: product('md'), flags: [], expect: 'Question 5?' },
  { name: 'meta', route: product('meta'), flags: [], expect: 'svc.meta/' },
  { name: 'public-faqs', route: `/api/v1/public/faqs?type=product&ref=${PRODUCT_ID}`, flags: ['-H', `X-Api-Key: ${widgetKey}`, '-H', `Origin: ${ORIGIN}`], expect: 'Question 5?' },
  // What a browser sends: gzip accepted, so both servers answer with the same compressed bytes.
  { name: 'embed', route: '/embed.js', flags: ['-H', 'Accept-Encoding: gzip'], expect: '' },
  { name: 'badge', route: '/api/v1/public/probe/badge?domain=www.bench-shop.test', flags: [], expect: '<svg' },
];

/** Svc's answer to `route` with these wrk flags (request headers): status, body and response headers. */
async function answerOf({ route, flags, expect }: Case): Promise<{ status: number; body: Uint8Array; headers: Record<string, string> }> {
  const request: Record<string, string> = {};
  for (let i = 0; i < flags.length; i += 2) {
    const header = flags[i + 1]!;
    request[header.slice(0, header.indexOf(':'))] = header.slice(header.indexOf(':') + 1).trim();
  }
  const res = await fetch(`${svcUrl}${route}`, { headers: request, decompress: false });
  const body = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200 || (expect && !new TextDecoder().decode(body).includes(expect))) throw new Error(`unexpected answer to ${route}: ${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
  // Bun adds Date and Content-Length to every answer, the baseline's as well.
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'content-length') headers[name] = value;
  });
  return { status: res.status, body, headers };
}

/** The content headers alone: the body-only baseline. */
const contentHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name === 'content-type' || name === 'content-encoding'));

/** A bare baseline answering `headers` with the body in `file`, warmed up. */
async function startBaseline(route: string, flags: string[], file: string, status: number, headers: Record<string, string>) {
  const baseline = await spawnServer(['bench/signals/baseline.ts', file, JSON.stringify(headers), String(status)]);
  await wrk(`${baseline.url}${route}`, WARM_UP_SECONDS, { flags });
  return baseline;
}

/** svc's requests/s over a baseline's, of the summed slices, and the lowest and highest of the rounds' own ratios. */
function ratioOf(svc: AlternatingResult, baseline: AlternatingResult): string {
  const rounds = svc.slices.map((slice, i) => slice.rps / baseline.slices[i]!.rps);
  const spread = rounds.length > 1 ? ` (rounds ${Math.min(...rounds).toFixed(3)}-${Math.max(...rounds).toFixed(3)})` : '';
  return `${(svc.total.rps / baseline.total.rps).toFixed(3)}${spread}`;
}

async function compare(one: Case) {
  const { name, route, flags } = one;
  const answer = await answerOf(one);
  const file = path.join(work, `${name}.body`);
  writeFileSync(file, answer.body);
  const sameResponse = await startBaseline(route, flags, file, answer.status, answer.headers);
  const sameBody = await startBaseline(route, flags, file, answer.status, contentHeaders(answer.headers));
  await wrk(`${svcUrl}${route}`, WARM_UP_SECONDS, { flags });
  const target = (url: string) => ({ url: `${url}${route}`, options: { flags } });
  // Each server receives only its own slices' requests, so its CPU over the whole alternation is theirs
  // (and svc's background tasks', which are idle here).
  const cpu = { sameResponse: measureCpu(sameResponse.proc.pid), svc: measureCpu(svcProc.pid) };
  const runs = await wrkAlternating({ sameResponse: target(sameResponse.url), sameBody: target(sameBody.url), svc: target(svcUrl) }, SECONDS, SLICE_SECONDS);
  const cpuUse = { sameResponse: cpu.sameResponse.stop(), svc: cpu.svc.stop() };
  sameResponse.proc.kill();
  sameBody.proc.kill();
  const encoding = answer.headers['content-encoding'];
  console.log(`${name}: GET ${route} (${answer.body.byteLength} B body${encoding ? `, ${encoding}` : ''}; headers: ${Object.keys(answer.headers).join(', ')})`);
  console.log(resultRow('  baseline, same response', runs.sameResponse.total));
  console.log(resultRow('  baseline, same body, fewer headers', runs.sameBody.total));
  console.log(resultRow(`  svc`, runs.svc.total));
  console.log(`  ratio vs same response: ${ratioOf(runs.svc, runs.sameResponse)} (goal >= 0.7)`);
  console.log(`  ratio vs same body, fewer headers: ${ratioOf(runs.svc, runs.sameBody)}`);
  const cpuLines = cpuReport('request', { label: 'baseline, same response', use: cpuUse.sameResponse, count: runs.sameResponse.total.requests }, { label: 'svc', use: cpuUse.svc, count: runs.svc.total.requests });
  for (const line of cpuLines) console.log(`  ${line}`);
}

const slices = slicesOf(SECONDS, SLICE_SECONDS);
console.log(
  `signals bench: wrk -t2 -c64, ${SECONDS} s for each server in ${slices.length} rounds (${slices.join(' + ')} s) taking turns, each beside two bare Bun.serve baselines: the same response (status, body and svc's response headers, a per-request X-Request-Id made as svc makes it) and the same body with its content headers only; p50 is the median of the slices', p99 the highest`,
);
for (const one of CASES) if (ONLY.length === 0 || ONLY.includes(one.name)) await compare(one);
if (PROFILE_DIR) {
  // SIGTERM shuts svc down cleanly, which is when Bun writes the profile.
  svcProc.kill('SIGTERM');
  await svcProc.exited;
}
process.exit(0);
