// in-process: ns per answer for each hot route (answer only, and through the observed lane)
import { makeTestApp } from './test/helpers/app.ts';
import { addFaq, enrich, realisticProduct, seedStore, syncProduct } from './test/helpers/signals.ts';
import { scanPayload } from './test/helpers/probe.ts';
import { aheadOfTheApp } from './src/lib/hot-route.ts';
const t = await makeTestApp({ env: { SVC_LOG_ACCESS: 'all' } });
const storeId = seedStore(t, 'platform-a', 'hot.myplatform-a.com');
syncProduct(t, storeId, realisticProduct('platform-a', 424242, 'hot.myplatform-a.com'));
await enrich(t, storeId, '424242');
for (let i = 1; i <= 5; i++) await addFaq(t, { storeId, entityType: 'product', entityRef: '424242', question: `Question ${i}?`, answer: `<p>Answer ${i}</p>`, status: 'approved', position: i });
const key = t.keys.create({ name: 'w', scopes: ['products:read'], allowedDomains: ['www.hot-shop.test'], storeId }).key;
const lead = t.leads.create('l@example.com', true);
await t.request('/api/v1/probe/telemetry', { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': lead.apiToken }, body: JSON.stringify(scanPayload({ hostname: 'www.hot-shop.test' })) });
const routes = aheadOfTheApp(t.app, t.observability.observer, (r) => { throw new Error('fallback ' + r.url); });
const cases: [string, string, Record<string, string>, Record<string, string>][] = [
  ['jsonld', '/api/v1/platform-a/products/:file', { file: '424242.jsonld' }, {}],
  ['meta', '/api/v1/platform-a/products/:file', { file: '424242.meta' }, {}],
  ['faqs', '/api/v1/public/faqs', {}, { 'X-Api-Key': key, Origin: 'https://www.hot-shop.test' }],
  ['embed', '/embed.js', {}, { 'Accept-Encoding': 'gzip' }],
  ['badge', '/api/v1/public/probe/badge', {}, {}],
];
const N = 20000;
const ONLY = process.env.ONLY?.split(",");
for (const [name, path, params, headers] of cases) {
  if (ONLY && !ONLY.includes(name)) continue;
  const url = name === 'faqs' ? '/api/v1/public/faqs?type=product&ref=424242' : name === 'badge' ? '/api/v1/public/probe/badge?domain=www.hot-shop.test' : name === 'embed' ? '/embed.js' : `/api/v1/platform-a/products/${params.file}`;
  const hot = t.app.hotRoutes.find((r) => r.path === path)!;
  const mk = () => Array.from({ length: N }, () => Object.assign(new Request(`http://localhost${url}`, { headers }), { params }));
  for (const [label, run] of [['answer', (r: any) => hot.answer(r, params)], ['lane', (r: any) => routes[path]!.GET(r)]] as const) {
    let best = Infinity;
    for (let rep = 0; rep < Number(process.env.REPS ?? 5); rep++) {
      const reqs = mk();
      for (const r of reqs) r.headers; // materialise as the real server path would on first touch anyway
      const s = performance.now();
      for (const r of reqs) { const res = run(r) as Response; if (res.status !== 200) throw new Error(name + res.status); }
      best = Math.min(best, ((performance.now() - s) / N) * 1e6);
    }
    console.log(name.padEnd(8), label.padEnd(7), best.toFixed(0), 'ns');
  }
}
t.close();
