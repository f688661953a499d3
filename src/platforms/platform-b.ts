import { ApiError } from '../lib/errors.ts';
import { DEFAULT_API_TIMEOUT_MS, DEFAULT_RETRY, PlatformApiError, PlatformThrottled, atMost, callJson, createHoldoffs, idOf, isoToMillis, platformWaitMs, stringOrNull, type CallRoute, type RetryPolicy } from './http.ts';
import type { EntryData } from '../catalog/entry-data.ts';
import type { Availability, ProductData } from '../catalog/product-data.ts';
import type { CatalogPage, HookRegistration, ProductGone, WebhookEvent } from './types.ts';
import { combinedAvailability, compareAtOrNull, decimalOrNull, imageUrl, lowestPrice, mapVariants, optionNamesOf, optionValues } from './variants.ts';

export const PLATFORM_B_HEADERS = {
  storeId: 'x-svc-store-id',
  secret: 'x-svc-webhook-secret',
  authToken: 'x-auth-token',
} as const;

export const PLATFORM_B_HOOK_SCOPES = ['store/product/created', 'store/product/updated', 'store/product/deleted'];
const ORDER_SCOPES = new Set(['store/order/created', 'store/order/statusUpdated']);

/**
 * Verified payload -> event. Product payloads carry only the id: created/updated become a fetch.
 * The event's data names its resource (`data.type`): one that is not the scope's own is refused.
 */
export function platformBEvent(payload: any, receivedAt: number): WebhookEvent {
  const scope = payload.scope as string;
  if (PLATFORM_B_HOOK_SCOPES.includes(scope)) {
    if (payload.data?.type !== 'product') return { kind: 'refused', reason: 'body_not_for_topic' };
    const productId = idOf(payload.data.id);
    if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no data.id');
    if (scope === 'store/product/deleted') {
      const at = typeof payload.created_at === 'number' ? Math.min(payload.created_at * 1000, receivedAt) : receivedAt;
      return { kind: 'product.remove', productId, at };
    }
    return { kind: 'product.fetch', productId };
  }
  if (ORDER_SCOPES.has(scope)) {
    if (payload.data?.type !== 'order') return { kind: 'refused', reason: 'body_not_for_topic' };
    const orderId = idOf(payload.data.id);
    if (!orderId) throw new ApiError(400, 'missing_order_id', 'the payload carries no data.id');
    const status = payload?.data?.status?.new_status_id;
    return { kind: 'order', orderId, status: status === undefined ? null : String(status) };
  }
  return { kind: 'unhandled' };
}

const AVAILABILITY: Record<string, ProductData['availability']> = { available: 'in_stock', preorder: 'backorder', disabled: 'out_of_stock' };

/**
 * Availability of the product or one of its variants. `disabled` and `preorder` apply to every
 * variant; otherwise a disabled variant is out of stock, and tracked inventory (per product or per
 * variant, as `inventory_tracking` says) decides by its level.
 */
function availabilityOf(data: any, variant: any | null): Availability | null {
  const base = AVAILABILITY[data.availability] ?? null;
  if (base !== 'in_stock') return base;
  if (variant?.purchasing_disabled === true) return 'out_of_stock';
  const level = data.inventory_tracking === 'variant' && variant ? variant.inventory_level : data.inventory_tracking === 'product' ? data.inventory_level : null;
  return typeof level === 'number' && level <= 0 ? 'out_of_stock' : 'in_stock';
}

/** A storefront path as the platform gives it (`/shoes/trail-runner/`), or null. */
const storefrontPath = (value: unknown): string | null => {
  const path = stringOrNull(value);
  return path?.startsWith('/') ? path : null;
};

/** The last segment of a storefront path: the slug the widget detects (`/shoes/trail-runner/` -> `trail-runner`). */
const handleOf = (path: string | null): string | null => (path ? path.replace(/^\/|\/$/g, '').split('/').pop() || null : null);

/**
 * A catalog category (`custom_url.url`) or content page (`url`) -> catalogue entry. Neither API
 * reports a modification time.
 */
export function platformBEntry(item: any, storefront: string, type: 'category' | 'page'): EntryData {
  const entryId = idOf(item?.id);
  if (!entryId) throw new ApiError(400, 'missing_entry_id', 'the item carries no id');
  const path = storefrontPath(type === 'category' ? item.custom_url?.url : item.url);
  return { entryId, handle: handleOf(path), title: stringOrNull(item.name, 1000) ?? '', url: path ? `https://${storefront}${path}` : null, updatedAt: null };
}

/**
 * The catalog API's product (`data` of GET /v3/catalog/products/{id}?include=images,variants,...)
 * -> catalogue data. Each variant's `calculated_price` is what a shopper pays (the variant's or the
 * product's price, with any sale); the regular price above it is the compare-at price. Options come
 * from the variants' `option_values` (`option_display_name` -> `label`); a product without options
 * has one base variant with none.
 */
export function platformBProduct(data: any, storefront: string, fetchedAt: number): ProductData {
  const images = (Array.isArray(data.images) ? data.images : [])
    .slice()
    .sort((a: any, b: any) => Number(Boolean(b?.is_thumbnail)) - Number(Boolean(a?.is_thumbnail)))
    .map((i: any) => stringOrNull(i?.url_zoom) ?? stringOrNull(i?.url_standard))
    .filter(Boolean)
    .slice(0, 50);
  const path = storefrontPath(data.custom_url?.url);
  const productPrice = decimalOrNull(data.calculated_price) ?? decimalOrNull(data.price);
  const variants = mapVariants(data.variants, (v) => {
    const variantId = idOf(v.id);
    if (!variantId) return null;
    const price = decimalOrNull(v.calculated_price) ?? decimalOrNull(v.price) ?? productPrice;
    const optionPairs: [unknown, unknown][] = (Array.isArray(v.option_values) ? v.option_values : []).map((o: any) => [o?.option_display_name, o?.label]);
    const options = optionValues(optionPairs);
    const labels = Object.values(options);
    return {
      variantId,
      title: labels.length > 0 ? labels.join(' / ') : null,
      sku: stringOrNull(v.sku, 255),
      barcode: stringOrNull(v.gtin, 64) ?? stringOrNull(v.upc, 64),
      mpn: stringOrNull(v.mpn, 255),
      price,
      compareAtPrice: compareAtOrNull(decimalOrNull(v.price) ?? decimalOrNull(data.price), price),
      availability: availabilityOf(data, v),
      options,
      image: imageUrl(v.image_url),
      url: null,
    };
  });
  return {
    productId: idOf(data.id)!,
    handle: handleOf(path),
    title: stringOrNull(data.name, 1000) ?? '',
    descriptionHtml: stringOrNull(data.description, 100_000),
    price: lowestPrice(variants.map((v) => v.price)) ?? productPrice,
    availability: variants.length > 0 ? combinedAvailability(variants.map((v) => v.availability)) : availabilityOf(data, null),
    sku: stringOrNull(data.sku, 255),
    barcode: stringOrNull(data.gtin, 64) ?? stringOrNull(data.upc, 64),
    mpn: stringOrNull(data.mpn, 255),
    brand: null,
    images,
    url: path ? `https://${storefront}${path}` : null,
    options: optionNamesOf(variants),
    variants,
    updatedAt: isoToMillis(data.date_modified) ?? fetchedAt,
    raw: data,
  };
}

/** Products per page of a catalogue import (the API allows up to 250; variants and images come with each). */
const PRODUCTS_PER_PAGE = 50;
const ENTRIES_PER_PAGE = 100;
const ENTRY_LISTS = { category: '/v3/catalog/categories', page: '/v3/content/pages' } as const;

/** Stores whose API quota window is spent (by API URL and token): every list call of any sync phase waits for its reset. */
const quotaResets = createHoldoffs();

/** Platform B's REST API for one store (`X-Auth-Token`). */
export function platformBClient(options: { apiBase: string; storeHash: string; accessToken: string; timeoutMs?: number | undefined; retry?: RetryPolicy | undefined; via: CallRoute }) {
  const base = `${options.apiBase}/stores/${encodeURIComponent(options.storeHash)}`;
  const headers = { [PLATFORM_B_HEADERS.authToken]: options.accessToken };
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_MS;
  const { via } = options;
  const retry = options.retry ?? DEFAULT_RETRY;
  const api = `${base} ${options.accessToken}`;
  /**
   * One page of a v3 list in the platform's envelope (`data`, `meta.pagination.total_pages`). The
   * quota headers say when the window's requests are spent: no list call goes out until the window
   * resets (a 429 says the same, and is not a failure). A 429 without a reset time says nothing of
   * when: the caller backs off (never an immediate retry).
   */
  async function listPage(path: string, cursor: string | null, limit: number, query = ''): Promise<CatalogPage<unknown>> {
    quotaResets.check(api);
    const page = cursor === null ? 1 : Number(cursor);
    const { status, body, headers: quota } = await callJson(`${base}${path}?page=${page}&limit=${limit}${query}`, { headers }, { timeoutMs, expect: [200, 429], via });
    const reset = Number(quota.get('x-rate-limit-time-reset-ms') ?? NaN);
    const resetMs = Number.isFinite(reset) && reset > 0 ? platformWaitMs(reset) : null;
    // An answer without the header says nothing about the quota (Number(null) would read as 0 left).
    const left = Number(quota.get('x-rate-limit-requests-left') ?? NaN);
    const spent = status === 429 || (Number.isFinite(left) && left <= 0);
    if (spent && resetMs !== null) quotaResets.hold(api, resetMs);
    if (status === 429) throw new PlatformThrottled('the API quota is spent', resetMs);
    if (!Array.isArray(body?.data)) throw new PlatformApiError(`GET ${path}: the response has no data list`);
    const totalPages = Number(body?.meta?.pagination?.total_pages ?? page);
    return { items: atMost(body.data, limit, `GET ${path}`), next: page < totalPages ? String(page + 1) : null, waitMs: spent ? (resetMs ?? retry.baseMs) : 0 };
  }
  return {
    /**
     * One hook per product scope to `destination`, carrying svc's store id and secret headers. An
     * existing hook for the same scope and destination is updated (re-activated, headers refreshed)
     * instead of duplicated: the platform allows one per scope + destination anyway.
     */
    async registerHooks(destination: string, hookHeaders: Record<string, string>): Promise<HookRegistration> {
      const { body } = await callJson(`${base}/v3/hooks`, { headers }, { timeoutMs, expect: [200], via });
      const hooks: any[] = Array.isArray(body?.data) ? body.data : [];
      for (const scope of PLATFORM_B_HOOK_SCOPES) {
        const desired = { scope, destination, is_active: true, headers: hookHeaders };
        // The hook's id goes into a URL path: only an id of the platform's shape is used.
        const existing = idOf(hooks.find((h) => h?.scope === scope && h?.destination === destination)?.id);
        if (existing) await callJson(`${base}/v3/hooks/${existing}`, { method: 'PUT', headers, body: desired }, { timeoutMs, expect: [200], via });
        else await callJson(`${base}/v3/hooks`, { method: 'POST', headers, body: desired }, { timeoutMs, expect: [200, 201], via });
      }
      return { topics: PLATFORM_B_HOOK_SCOPES };
    },
    /**
     * Deletes the store's hooks of svc's scopes that deliver to `destination`, putting each scope in
     * `removed` as soon as the platform confirms it (a hook already gone, 404, counts as removed).
     */
    async unregisterHooks(destination: string, removed: string[]): Promise<void> {
      const { body } = await callJson(`${base}/v3/hooks`, { headers }, { timeoutMs, expect: [200], via });
      const hooks: any[] = Array.isArray(body?.data) ? body.data : [];
      for (const hook of hooks) {
        // The hook's id goes into a URL path: only an id of the platform's shape is used.
        const id = idOf(hook?.id);
        if (id === null || hook.destination !== destination || !PLATFORM_B_HOOK_SCOPES.includes(hook.scope)) continue;
        await callJson(`${base}/v3/hooks/${id}`, { method: 'DELETE', headers }, { timeoutMs, expect: [200, 204, 404], via });
        removed.push(hook.scope);
      }
    },
    /** The product's current data, or null once the platform no longer has it (404). */
    async fetchProduct(productId: string): Promise<any | null> {
      const { status, body } = await callJson(`${base}/v3/catalog/products/${productId}?include=images,variants,custom_fields`, { headers }, { timeoutMs, expect: [200, 404], via });
      return status === 404 ? null : (body?.data ?? null);
    },
    /** Null while the store has the product; once it answers 404, gone (when: the API does not say). */
    async productGone(productId: string): Promise<ProductGone | null> {
      const { status } = await callJson(`${base}/v3/catalog/products/${productId}`, { headers }, { timeoutMs, expect: [200, 404], via });
      return status === 404 ? { at: null } : null;
    },
    /**
     * One page of the catalog (`cursor`: the page number, null for the first), in id order, with
     * the fields a product fetch includes.
     */
    listProducts: (cursor: string | null) => listPage('/v3/catalog/products', cursor, PRODUCTS_PER_PAGE, '&sort=id&direction=asc&include=images,variants,custom_fields'),
    /** One page of the catalog's categories or of the store's content pages (`cursor` as for products). */
    listEntries: (type: 'category' | 'page', cursor: string | null) => listPage(ENTRY_LISTS[type], cursor, ENTRIES_PER_PAGE),
    /** True once the platform no longer has the category or content page (404). */
    async entryGone(type: 'category' | 'page', entryId: string): Promise<boolean> {
      const { status } = await callJson(`${base}${ENTRY_LISTS[type]}/${entryId}`, { headers }, { timeoutMs, expect: [200, 404], via });
      return status === 404;
    },
    async fetchCurrency(): Promise<string | null> {
      const { body } = await callJson(`${base}/v2/store`, { headers }, { timeoutMs, expect: [200], via });
      return stringOrNull(body?.currency, 3);
    },
  };
}
