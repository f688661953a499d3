import { createHmac } from 'node:crypto';
import type { Platform } from '../../src/stores/types.ts';
import { platformAProduct as mapA } from '../../src/platforms/platform-a.ts';
import { platformBProduct as mapB } from '../../src/platforms/platform-b.ts';
import { platformCProduct as mapC } from '../../src/platforms/platform-c.ts';
import type { ProductData } from '../../src/catalog/product-data.ts';
import { platformAProduct, platformASimpleProduct, platformBProduct, platformBVariantProduct, platformCProduct, platformCVariableProduct } from '../fakes/payloads.ts';
import { bearer, jsonRequest, type TestApp } from './app.ts';

/** A store straight in the registry (no platform calls): platform A through svc's app, B and C with their keys. */
export async function seedStore(t: TestApp, platform: Platform, ref: string, currency: string | null = 'USD'): Promise<string> {
  const credentials =
    platform === 'platform-a'
      ? { kind: 'via-app' as const }
      : platform === 'platform-b'
        ? { kind: 'api-token' as const, storeHash: ref, accessToken: 'tok' }
        : { kind: 'rest-keys' as const, siteUrl: ref, consumerKey: 'ck', consumerSecret: 'cs' };
  const row = await t.webhooks.stores.create({ platform, domain: ref.replace(/^https?:\/\//, ''), currency, parsed: { credentials, platformRef: ref } });
  if (!row) throw new Error(`store ${ref} already exists`);
  return row.id;
}

/**
 * A realistic catalogue product of each platform (the fakes' payloads through the platform's own
 * mapper): `multi` has several variants, `single` one (or, on platform C, none). The default is the
 * platform's default fake product: multi-variant on A, single-variant on B and C.
 */
export function realisticProduct(platform: Platform, id: number, storeRef: string, kind?: 'multi' | 'single'): ProductData {
  const at = Date.parse('2026-01-10T00:00:00Z');
  if (platform === 'platform-a') return mapA(kind === 'single' ? platformASimpleProduct(id) : platformAProduct(id), storeRef, at);
  if (platform === 'platform-b') return mapB(kind === 'multi' ? platformBVariantProduct(id) : platformBProduct(id), 'shop.platform-b.example', at);
  if (kind === 'multi') {
    const { product, variations } = platformCVariableProduct(id, storeRef);
    return mapC(product, variations, at);
  }
  return mapC(platformCProduct(id, storeRef), [], at);
}

/** A product as a catalogue sync stores it (through the catalogue, in the store's currency). */
export async function syncProduct(t: TestApp, storeId: string, product: ProductData): Promise<void> {
  const store = await t.webhooks.stores.get(storeId);
  if (!store) throw new Error(`no store ${storeId}`);
  await t.webhooks.catalog.upsert(storeId, store.currency, product);
}

export const ENRICHMENT = {
  summary: 'A sturdy everyday product, made to last.',
  highlights: ['Ships in 2 days', 'Two-year warranty'],
  attributes: { Material: 'Waxed canvas', Origin: 'Portugal' },
};

export async function enrich(t: TestApp, storeId: string, productId: string, body: unknown = ENRICHMENT): Promise<Response> {
  return t.request(`/api/v1/admin/stores/${storeId}/products/${productId}/enrichment`, jsonRequest('PUT', body, bearer(await t.keyWith('admin'))));
}

export async function addFaq(t: TestApp, body: Record<string, unknown>): Promise<any> {
  const res = await t.request('/api/v1/admin/faqs', jsonRequest('POST', body, bearer(await t.keyWith('admin'))));
  if (res.status !== 201) throw new Error(`FAQ creation failed: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function patchFaq(t: TestApp, id: string, body: Record<string, unknown>): Promise<Response> {
  return t.request(`/api/v1/admin/faqs/${id}`, jsonRequest('PATCH', body, bearer(await t.keyWith('admin'))));
}

/** A platform-A webhook delivery signed with `secret` (the HMAC of the raw body), with a fresh event id. */
export function signedPlatformADelivery(secret: string, shop: string, topic: string, payload: unknown): RequestInit {
  const body = JSON.stringify(payload);
  return {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'X-Platform-A-Topic': topic,
      'X-Platform-A-Shop-Domain': shop,
      'X-Platform-A-Hmac-Sha256': createHmac('sha256', secret).update(body).digest('base64'),
      'X-Platform-A-Event-Id': crypto.randomUUID(),
    },
  };
}
