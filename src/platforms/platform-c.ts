import { ApiError } from '../lib/errors.ts';
import { DEFAULT_API_TIMEOUT_MS, callJson, idOf, isoToMillis, stringOrNull } from './http.ts';
import type { HookRegistration, ProductData, WebhookEvent } from './types.ts';

export const PLATFORM_C_HEADERS = {
  signature: 'x-platform-c-webhook-signature',
  source: 'x-platform-c-webhook-source',
  topic: 'x-platform-c-webhook-topic',
  deliveryId: 'x-platform-c-webhook-delivery-id',
} as const;

export const PLATFORM_C_HOOK_TOPICS = ['product.created', 'product.updated', 'product.deleted'];

/** The unsigned creation ping: the literal form body `webhook_id=<n>`. */
export function isPlatformCPing(body: Uint8Array): boolean {
  return body.byteLength <= 32 && /^webhook_id=\d+$/.test(new TextDecoder().decode(body));
}

/** `home_url('/')` as the platform sends it, compared without caring about a trailing slash or case. */
export function sameSite(a: string, b: string): boolean {
  const normal = (url: string) => url.trim().toLowerCase().replace(/\/+$/, '');
  return normal(a) === normal(b);
}

const AVAILABILITY: Record<string, ProductData['availability']> = { instock: 'in_stock', outofstock: 'out_of_stock', onbackorder: 'backorder' };

/** The v3 REST product (create/update payload) -> catalogue data. */
export function platformCProduct(payload: any, receivedAt: number): ProductData {
  const productId = idOf(payload?.id);
  if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
  return {
    productId,
    handle: stringOrNull(payload.slug, 255),
    title: stringOrNull(payload.name, 1000) ?? '',
    descriptionHtml: stringOrNull(payload.description, 100_000),
    price: stringOrNull(payload.price, 32),
    availability: AVAILABILITY[payload.stock_status] ?? null,
    sku: stringOrNull(payload.sku, 255),
    gtin: stringOrNull(payload.global_unique_id, 64),
    brand: stringOrNull(payload.brands?.[0]?.name, 255),
    images: (Array.isArray(payload.images) ? payload.images : []).map((i: any) => stringOrNull(i?.src)).filter(Boolean).slice(0, 50),
    url: stringOrNull(payload.permalink),
    updatedAt: isoToMillis(payload.date_modified_gmt, true) ?? receivedAt,
    raw: payload,
  };
}

export function platformCEvent(topic: string, payload: any, receivedAt: number): WebhookEvent {
  switch (topic) {
    case 'product.created':
    case 'product.updated':
      return { kind: 'product.upsert', product: platformCProduct(payload, receivedAt) };
    case 'product.deleted': {
      const productId = idOf(payload?.id);
      if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
      return { kind: 'product.remove', productId, at: receivedAt };
    }
    default:
      return { kind: 'unhandled' };
  }
}

/** Dedupe key per platforms.md: the platform never retries, and its delivery id changes per attempt. */
export function platformCDedupeKey(topic: string, payload: any): string | null {
  const id = idOf(payload?.id);
  const modified = stringOrNull(payload?.date_modified_gmt, 64);
  return id && modified && topic !== 'product.deleted' ? `${topic}:${id}:${modified}` : null;
}

/** Platform C's REST API on the store's own site (consumer key + secret, HTTP Basic). */
export function platformCClient(options: { siteUrl: string; consumerKey: string; consumerSecret: string; timeoutMs?: number }) {
  const base = `${options.siteUrl.replace(/\/+$/, '')}/wp-json/wc/v3`;
  const headers = { authorization: `Basic ${btoa(`${options.consumerKey}:${options.consumerSecret}`)}` };
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_MS;
  return {
    /** One active hook per product topic to `deliveryUrl` signed with `secret`; existing ones are updated, not duplicated. */
    async registerHooks(deliveryUrl: string, secret: string): Promise<HookRegistration> {
      const { body } = await callJson(`${base}/webhooks?per_page=100`, { headers }, { timeoutMs, expect: [200] });
      const hooks: any[] = Array.isArray(body) ? body : [];
      for (const topic of PLATFORM_C_HOOK_TOPICS) {
        const existing = hooks.find((h) => h?.topic === topic && h?.delivery_url === deliveryUrl);
        if (existing) {
          await callJson(`${base}/webhooks/${existing.id}`, { method: 'PUT', headers, body: { status: 'active', secret } }, { timeoutMs, expect: [200] });
        } else {
          await callJson(`${base}/webhooks`, { method: 'POST', headers, body: { name: `svc ${topic}`, topic, delivery_url: deliveryUrl, secret, status: 'active' } }, { timeoutMs, expect: [200, 201] });
        }
      }
      return { topics: PLATFORM_C_HOOK_TOPICS };
    },
    async fetchCurrency(): Promise<string | null> {
      const { body } = await callJson(`${base}/settings/general/woocommerce_currency`, { headers }, { timeoutMs, expect: [200] });
      return stringOrNull(body?.value, 3);
    },
  };
}
