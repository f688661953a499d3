import { afterAll, beforeAll, expect, test } from 'bun:test';
import { platformAProduct } from '../fakes/payloads.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { onceHeard } from '../helpers/engine.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { signedPlatformADelivery } from '../helpers/signals.ts';

const SHOP = 'e2e.myplatform-a.com';
const APP_SECRET = 'e2e-app-secret';
const env = { SVC_PLATFORM_A_APP_SECRET: APP_SECRET };
let data: ReturnType<typeof tempDir>;
let server: SpawnedServer;
let adminKey: string;

beforeAll(async () => {
  data = tempDir();
  adminKey = (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', data.dir], { env })).json.key;
  server = await spawnServer({ dataDir: data.dir, env });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  data.remove();
});

async function admin(method: string, route: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.url}${route}`, { method, headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect(res.ok).toBe(true);
  return res.json();
}

const deliver = (topic: string, payload: unknown) => fetch(`${server.url}/api/v1/webhooks/platform-a`, signedPlatformADelivery(APP_SECRET, SHOP, topic, payload));

test('a spawned server: webhook-synced product, enrichment and FAQ become signals and widget FAQs; a CLI revocation and app/uninstalled take effect at once', async () => {
  const store = await admin('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: SHOP, currency: 'USD', credentials: { viaApp: true } });
  expect((await deliver('products/create', platformAProduct(777))).status).toBe(200);
  await admin('PUT', `/api/v1/admin/stores/${store.id}/products/777/enrichment`, { summary: 'Carries a laptop.', highlights: ['Water resistant'], attributes: {} });
  await admin('POST', '/api/v1/admin/faqs', { storeId: store.id, entityType: 'product', entityRef: 'waxed-canvas-tote', question: 'Laptop?', answer: '<p>Yes.</p>', status: 'approved' });
  const widget = await admin('POST', '/api/v1/admin/keys', { name: 'widget', scopes: ['products:read'], allowedDomains: ['localhost'], storeId: store.id });

  const meta = await (await fetch(`${server.url}/api/v1/platform-a/products/777.meta`)).json();
  // Links are built from the base URL (here the default, derived from --http before the port is known).
  expect(meta.links.jsonld).toEndWith(`/api/v1/platform-a/stores/${store.id}/products/777.jsonld`);
  const jsonld = JSON.parse(await (await fetch(`${server.url}/api/v1/platform-a/products/777.jsonld`)).text());
  expect(jsonld['@graph'][0].hasVariant.map((v: any) => v.offers)).toMatchObject([
    { price: '89.00', priceCurrency: 'USD' },
    { price: '89.00', priceCurrency: 'USD' },
    { price: '99.00', priceCurrency: 'USD' },
  ]);
  // The store's sitemap lists the product's signal URLs, served by this server.
  const sitemap = await (await fetch(`${server.url}/api/v1/platform-a/stores/${store.id}/sitemap.xml`)).text();
  expect(sitemap).toContain(`/api/v1/platform-a/stores/${store.id}/products/777.md</loc>`);
  expect(jsonld['@graph'][1].mainEntity[0].name).toBe('Laptop?');

  const origin = 'http://localhost:8123';
  const preflight = await fetch(`${server.url}/api/v1/public/faqs?type=product&ref=777`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' } });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe('*'); // the same for every origin: the GET decides
  const faqs = await fetch(`${server.url}/api/v1/public/faqs?type=product&ref=777`, { headers: { 'X-Api-Key': widget.key, Origin: origin } });
  expect(faqs.status).toBe(200);
  expect(faqs.headers.get('access-control-allow-origin')).toBe(origin);
  expect((await faqs.json()).items).toEqual([{ id: expect.any(String), question: 'Laptop?', answer: '<p>Yes.</p>' }]);

  expect((await runCli(['keys', 'revoke', widget.id, '--data-dir', data.dir], { env })).code).toBe(0);
  const askFaqs = async () => (await fetch(`${server.url}/api/v1/public/faqs?type=product&ref=777`, { headers: { 'X-Api-Key': widget.key, Origin: origin } })).status;
  expect(await onceHeard(askFaqs, (status) => status !== 200)).toBe(403);

  expect((await deliver('app/uninstalled', { id: 1, domain: SHOP })).status).toBe(200);
  for (const ext of ['jsonld', 'llm', 'md', 'meta']) expect((await fetch(`${server.url}/api/v1/platform-a/products/777.${ext}`)).status).toBe(410);
});
