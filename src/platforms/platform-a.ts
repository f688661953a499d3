import { ApiError } from '../lib/errors.ts';
import { DEFAULT_API_TIMEOUT_MS, PlatformApiError, callJson, idOf, isoToMillis, stringOrNull } from './http.ts';
import type { Availability } from '../db/schema/index.ts';
import type { HookRegistration, ProductData, WebhookEvent } from './types.ts';
import { combinedAvailability, compareAtOrNull, decimalOrNull, imageUrl, lowestPrice, mapVariants, optionValues } from './variants.ts';

export const PLATFORM_A_HEADERS = {
  signature: 'x-platform-a-hmac-sha256',
  topic: 'x-platform-a-topic',
  shopDomain: 'x-platform-a-shop-domain',
  eventId: 'x-platform-a-event-id',
  webhookId: 'x-platform-a-webhook-id',
  triggeredAt: 'x-platform-a-triggered-at',
  accessToken: 'x-platform-a-access-token',
} as const;

/** What svc registers for a store with its own app (spec §4.3 rule 3); order and privacy topics never. */
export const PLATFORM_A_HOOK_TOPICS = ['products/create', 'products/update', 'products/delete', 'app/uninstalled'];
export const PLATFORM_A_API_VERSION = '2025-01';
const PRIVACY_TOPICS = new Set(['customers/data_request', 'customers/redact', 'shop/redact']);
const ORDER_TOPICS = new Set(['orders/create', 'orders/paid']);

/** `<name>.<suffix>` with one DNS label before the suffix (the strict form of the platform's own check). */
export function isShopDomain(domain: string, suffix: string): boolean {
  if (domain.length > 253 || !domain.endsWith(`.${suffix}`)) return false;
  return /^[a-z0-9][a-z0-9-]{0,62}$/.test(domain.slice(0, -suffix.length - 1));
}

/** A variant's availability: untracked inventory is in stock; tracked, by quantity, with `continue` selling on backorder. */
function variantAvailability(variant: any): Availability | null {
  const quantity = variant.inventory_quantity;
  const tracked = variant.inventory_management !== undefined ? variant.inventory_management !== null : typeof quantity === 'number';
  if (!tracked) return variant.inventory_management === null ? 'in_stock' : null;
  if (typeof quantity === 'number' && quantity > 0) return 'in_stock';
  return variant.inventory_policy === 'continue' ? 'backorder' : 'out_of_stock';
}

/** Option names, except the platform's placeholder for a product without options (`Title` / `Default Title`). */
function optionNames(payload: any): string[] {
  const options: any[] = Array.isArray(payload.options) ? payload.options.slice(0, 3) : [];
  const names = options.map((o) => stringOrNull(o?.name, 255)?.trim() ?? '');
  const placeholder = options.length === 1 && names[0] === 'Title' && Array.isArray(options[0].values) && options[0].values.length <= 1 && options[0].values[0] === 'Default Title';
  return placeholder ? [] : names;
}

/**
 * The platform's REST Product resource (products/create|update payload) -> catalogue data. Variants
 * carry `option1..3` in the order of `options[]`, their own `image_id` (an id in `images[]`), and
 * their storefront URL is the product's with `?variant=<id>`.
 */
export function platformAProduct(payload: any, shopDomain: string, receivedAt: number): ProductData {
  const productId = idOf(payload?.id);
  if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
  const handle = stringOrNull(payload.handle, 255);
  const url = handle ? `https://${shopDomain}/products/${encodeURIComponent(handle)}` : null;
  const options = optionNames(payload);
  const imageList: any[] = Array.isArray(payload.images) ? payload.images : [];
  const imagesById = new Map(imageList.map((i) => [idOf(i?.id), imageUrl(i?.src)]));
  const variants = mapVariants(payload.variants, (v) => {
    const variantId = idOf(v.id);
    if (!variantId) return null;
    const price = decimalOrNull(v.price);
    const title = stringOrNull(v.title, 255);
    return {
      variantId,
      title: title === 'Default Title' ? null : title,
      sku: stringOrNull(v.sku, 255),
      barcode: stringOrNull(v.barcode, 64),
      mpn: null,
      price,
      compareAtPrice: compareAtOrNull(v.compare_at_price, price),
      availability: variantAvailability(v),
      options: optionValues(options.map((name, i) => [name, v[`option${i + 1}`]])),
      image: imagesById.get(idOf(v.image_id)) ?? null,
      url: url ? `${url}?variant=${variantId}` : null,
    };
  });
  // The platform has no product-level SKU or barcode: a single-variant product goes by its variant's.
  const only = variants.length === 1 ? variants[0]! : null;
  return {
    productId,
    handle,
    title: stringOrNull(payload.title, 1000) ?? '',
    descriptionHtml: stringOrNull(payload.body_html, 100_000),
    price: lowestPrice(variants.map((v) => v.price)),
    availability: combinedAvailability(variants.map((v) => v.availability)),
    sku: only?.sku ?? null,
    barcode: only?.barcode ?? null,
    mpn: null,
    brand: stringOrNull(payload.vendor, 255),
    images: imageList.map((i) => stringOrNull(i?.src)).filter((src): src is string => src !== null).slice(0, 50),
    url,
    options,
    variants,
    updatedAt: isoToMillis(payload.updated_at) ?? receivedAt,
    raw: payload,
  };
}

/** Topic + verified payload -> event. `eventAt` orders deletes (the triggered-at header, else receipt). */
export function platformAEvent(topic: string, payload: any, shopDomain: string, eventAt: number): WebhookEvent {
  switch (topic) {
    case 'products/create':
    case 'products/update':
      return { kind: 'product.upsert', product: platformAProduct(payload, shopDomain, eventAt) };
    case 'products/delete': {
      const productId = idOf(payload?.id);
      if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
      return { kind: 'product.remove', productId, at: eventAt };
    }
    case 'app/uninstalled':
      return { kind: 'store.uninstalled' };
  }
  if (PRIVACY_TOPICS.has(topic)) return { kind: 'privacy' };
  if (ORDER_TOPICS.has(topic)) {
    const orderId = idOf(payload?.id);
    if (!orderId) throw new ApiError(400, 'missing_order_id', 'the payload carries no order id');
    return { kind: 'order', orderId, status: stringOrNull(payload.financial_status, 64) };
  }
  return { kind: 'unhandled' };
}

const LIST_HOOKS = `query { webhookSubscriptions(first: 250) { edges { node { id topic endpoint { __typename ... on WebhookHttpEndpoint { callbackUrl } } } } } }`;
const CREATE_HOOK = `mutation webhookSubscriptionCreate($topic: WebhookSubscriptionTopic!, $webhookSubscription: WebhookSubscriptionInput!) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: $webhookSubscription) { webhookSubscription { id } userErrors { field message } } }`;
const SHOP_CURRENCY = `query { shop { currencyCode } }`;

const graphQlTopic = (topic: string) => topic.toUpperCase().replace('/', '_');

/** Platform A's GraphQL Admin API for one shop, authenticated with the store's access token. */
export function platformAClient(options: { apiBase: string; accessToken: string; timeoutMs?: number }) {
  const url = `${options.apiBase}/admin/api/${PLATFORM_A_API_VERSION}/graphql.json`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_MS;
  const graphql = async (query: string, variables?: Record<string, unknown>) => {
    const { body } = await callJson(url, { method: 'POST', headers: { [PLATFORM_A_HEADERS.accessToken]: options.accessToken }, body: { query, variables } }, { timeoutMs, expect: [200] });
    if (Array.isArray(body?.errors) && body.errors.length) throw new PlatformApiError(`GraphQL error: ${String(body.errors[0]?.message ?? 'unknown')}`);
    return body?.data;
  };
  return {
    /** Creates the subscriptions that are missing for `callbackUrl`; existing ones are kept (idempotent). */
    async registerHooks(callbackUrl: string): Promise<HookRegistration> {
      const data = await graphql(LIST_HOOKS);
      const existing = new Set<string>(
        (data?.webhookSubscriptions?.edges ?? [])
          .filter((e: any) => e?.node?.endpoint?.callbackUrl === callbackUrl)
          .map((e: any) => String(e.node.topic)),
      );
      for (const topic of PLATFORM_A_HOOK_TOPICS) {
        if (existing.has(graphQlTopic(topic))) continue;
        const created = await graphql(CREATE_HOOK, { topic: graphQlTopic(topic), webhookSubscription: { callbackUrl, format: 'JSON' } });
        const userErrors = created?.webhookSubscriptionCreate?.userErrors ?? [];
        if (userErrors.length) throw new PlatformApiError(`webhookSubscriptionCreate ${topic}: ${String(userErrors[0]?.message)}`);
      }
      return { topics: PLATFORM_A_HOOK_TOPICS };
    },
    async fetchCurrency(): Promise<string | null> {
      const data = await graphql(SHOP_CURRENCY);
      return stringOrNull(data?.shop?.currencyCode, 3);
    },
  };
}
