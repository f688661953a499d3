#!/usr/bin/env bun
// Benchmark: GET .jsonld (a realistic enriched product with FAQs) and the widget's public FAQ endpoint
// (key + origin checked on every request) per second, beside a bare Bun.serve baseline answering the
// same bytes, all in the same run. Usage: bun bench/signals/run.ts [seconds]. Needs wrk (apt-get install -y wrk).
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { platformAProduct } from '../../test/fakes/payloads.ts';
import { ROOT, cleanupOnExit, requireWrk, resultRow, spawnServer, wrk } from '../lib/harness.ts';

const SECONDS = Number(Bun.argv[2] ?? 10);
const SHOP = 'bench.myplatform-a.com';
const APP_SECRET = 'bench-app-secret';
const PRODUCT_ID = 424242;
const ORIGIN = 'https://www.bench-shop.test';

requireWrk();
const work = mkdtempSync(path.join(tmpdir(), 'svc-bench-signals-'));
cleanupOnExit(work);

const dataDir = path.join(work, 'data');
const created = Bun.spawnSync([process.execPath, 'src/main.ts', 'keys', 'create', '--scopes', 'admin', '--data-dir', dataDir], { cwd: ROOT });
const adminKey = JSON.parse(created.stdout.toString()).key as string;
const { url: svcUrl } = await spawnServer(['src/main.ts', 'serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], { SVC_PLATFORM_A_APP_SECRET: APP_SECRET });

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

const jsonldPath = `/api/v1/platform-a/products/${PRODUCT_ID}.jsonld`;
const faqPath = `/api/v1/public/faqs?type=product&ref=${PRODUCT_ID}`;
const faqHeaders = ['-H', `X-Api-Key: ${widgetKey}`, '-H', `Origin: ${ORIGIN}`];
const jsonld = await (await fetch(`${svcUrl}${jsonldPath}`)).text();
const faqs = await (await fetch(`${svcUrl}${faqPath}`, { headers: { 'X-Api-Key': widgetKey, Origin: ORIGIN } })).text();
if (!jsonld.includes('"Product"') || !faqs.includes('Question 5?')) throw new Error(`unexpected responses: ${jsonld.slice(0, 200)} / ${faqs.slice(0, 200)}`);

async function compare(name: string, route: string, body: string, flags: string[] = []) {
  const file = path.join(work, `${name}.body`);
  writeFileSync(file, body);
  const { url: baselineUrl } = await spawnServer(['bench/signals/baseline.ts', file]);
  await wrk(`${baselineUrl}${route}`, 3, { flags }); // warm-up
  const baseline = await wrk(`${baselineUrl}${route}`, SECONDS, { flags });
  await wrk(`${svcUrl}${route}`, 3, { flags });
  const svc = await wrk(`${svcUrl}${route}`, SECONDS, { flags });
  console.log(`${name}: GET ${route} (${body.length} B response)`);
  console.log(resultRow('  baseline (bare Bun.serve)', baseline));
  console.log(resultRow(`  svc`, svc));
  console.log(`  ratio svc/baseline: ${(svc.rps / baseline.rps).toFixed(3)} (goal >= 0.7)`);
}

console.log(`signals bench: wrk -t2 -c64 -d${SECONDS}s, each beside a bare Bun.serve answering the same bytes`);
await compare('jsonld', jsonldPath, jsonld);
await compare('public-faqs', faqPath, faqs, faqHeaders);
process.exit(0);
