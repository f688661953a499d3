import { ApiError } from '../lib/errors.ts';
import { DEFAULT_API_TIMEOUT_MS, PlatformApiError, PlatformProtocolError, PlatformThrottled, atMost, callJson, createHoldoffs, idOf, isoToMillis, platformWaitMs, stringOrNull, type CallRoute, type RetryPolicy } from './http.ts';
import { htmlToLine, safeHttpUrl } from '../lib/html.ts';
import { isIdOnly } from './payload-shapes.ts';
import type { CatalogPage, HookRegistration, ProductGone, WebhookEvent } from './types.ts';
import type { EntryData } from '../catalog/entry-data.ts';
import { MAX_VARIANTS, type ProductData } from '../catalog/product-data.ts';
import { combinedAvailability, compareAtOrNull, decimalOrNull, imageUrl, lowestPrice, mapVariants, optionValues } from './variants.ts';

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

/** Names of the attributes used for variations, in the product's attribute order. */
function variationAttributes(payload: any): string[] {
  const attributes: any[] = Array.isArray(payload.attributes) ? payload.attributes : [];
  return attributes
    .filter((a) => a?.variation === true)
    .sort((a, b) => Number(a?.position ?? 0) - Number(b?.position ?? 0))
    .map((a) => stringOrNull(a?.name, 255)?.trim())
    .filter((name): name is string => Boolean(name));
}

/** Products whose variations must be read from the API (`GET products/{id}/variations`): webhooks carry only their ids. */
export const hasVariations = (payload: any) => payload?.type === 'variable';

/**
 * The v3 REST product (the create/update payload, or `GET products/{id}`) plus, for a variable
 * product, its variations (`GET products/{id}/variations`) -> catalogue data. A variation that is not
 * published (`private`) is not for sale and is left out; an attribute a variation leaves open ("any
 * size") is absent from its options. The product's modification time is the newest of the product's
 * and its variations' (editing a variation alone does not move the product's).
 */
export function platformCProduct(payload: any, variations: any[], receivedAt: number): ProductData {
  const productId = idOf(payload?.id);
  if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
  const variants = mapVariants(
    variations.filter((v) => v?.status === undefined || v?.status === 'publish'),
    (v) => {
      const variantId = idOf(v.id);
      if (!variantId) return null;
      const price = decimalOrNull(v.price);
      const options = optionValues((Array.isArray(v.attributes) ? v.attributes : []).map((a: any) => [a?.name, a?.option]));
      const labels = Object.values(options);
      return {
        variantId,
        title: labels.length > 0 ? labels.join(' / ') : null,
        sku: stringOrNull(v.sku, 255),
        barcode: stringOrNull(v.global_unique_id, 64),
        mpn: null,
        price,
        compareAtPrice: compareAtOrNull(v.regular_price, price),
        availability: AVAILABILITY[v.stock_status] ?? null,
        options,
        image: imageUrl(v.image?.src),
        url: safeHttpUrl(stringOrNull(v.permalink)),
      };
    },
  );
  const modified = [payload, ...variations].map((item) => isoToMillis(item?.date_modified_gmt, true)).filter((ms): ms is number => ms !== null);
  const price = decimalOrNull(payload.price);
  return {
    productId,
    handle: stringOrNull(payload.slug, 255),
    title: stringOrNull(payload.name, 1000) ?? '',
    descriptionHtml: stringOrNull(payload.description, 100_000),
    price: lowestPrice(variants.map((v) => v.price)) ?? price,
    availability: variants.length > 0 ? combinedAvailability(variants.map((v) => v.availability)) : (AVAILABILITY[payload.stock_status] ?? null),
    sku: stringOrNull(payload.sku, 255),
    barcode: stringOrNull(payload.global_unique_id, 64),
    mpn: null,
    brand: stringOrNull(payload.brands?.[0]?.name, 255),
    images: (Array.isArray(payload.images) ? payload.images : []).map((i: any) => stringOrNull(i?.src)).filter(Boolean).slice(0, 50),
    url: stringOrNull(payload.permalink),
    options: variants.length > 0 ? variationAttributes(payload) : [],
    variants,
    updatedAt: modified.length > 0 ? Math.max(...modified) : receivedAt,
    raw: payload,
  };
}

/** The REST product resource (a product or a variation): it names its product type and its storefront link. */
const isProductResource = (payload: Record<string, unknown>) => typeof payload.type === 'string' && typeof payload.permalink === 'string';

/**
 * Topic + verified payload -> event. A simple product is applied from the payload. A variable product
 * and a variation (the platform fires `product.updated` for a variation with the variation itself as
 * the payload) become a fetch of the parent product and all its variations through the API: the
 * payload names the variations only by id. The topic header is not signed: a body that is not the
 * topic's own (a delete's `{"id"}` under product.updated, a product under product.deleted) is refused;
 * one of the topic's shape without its id is malformed (400).
 * A delete carries no time of its own (0: ordered right after the data svc holds; the removal is
 * confirmed and dated through the API, src/webhooks/removal.ts).
 */
export function platformCEvent(topic: string, payload: Record<string, any>, receivedAt: number): WebhookEvent {
  switch (topic) {
    case 'product.created':
    case 'product.updated': {
      if (!isProductResource(payload)) return { kind: 'refused', reason: 'body_not_for_topic' };
      if (payload?.type === 'variation') {
        const parentId = idOf(payload.parent_id);
        if (!parentId) throw new ApiError(400, 'missing_product_id', 'the variation carries no parent_id');
        return { kind: 'product.fetch', productId: parentId };
      }
      if (hasVariations(payload)) {
        const productId = idOf(payload?.id);
        if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
        return { kind: 'product.fetch', productId };
      }
      return { kind: 'product.upsert', product: platformCProduct(payload, [], receivedAt) };
    }
    case 'product.deleted': {
      if (!isIdOnly(payload)) return { kind: 'refused', reason: 'body_not_for_topic' };
      const productId = idOf(payload.id);
      if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
      return { kind: 'product.remove', productId, at: 0 };
    }
    default:
      return { kind: 'unhandled' };
  }
}

/**
 * A product the API still returns but the shop no longer sells: one in the trash (`product.deleted`
 * trashes it, and the API answers 200 with `status: trash`), gone as of its modification time
 * (trashing it modifies it). Null for any other product.
 */
export function platformCGone(data: any): ProductGone | null {
  return data?.status === 'trash' ? { at: isoToMillis(data.date_modified_gmt, true) } : null;
}

/** Dedupe key per platforms.md: the platform never retries, and its delivery id changes per attempt. */
export function platformCDedupeKey(topic: string, payload: any): string | null {
  const id = idOf(payload?.id);
  const modified = stringOrNull(payload?.date_modified_gmt, 64);
  return id && modified && topic !== 'product.deleted' ? `${topic}:${id}:${modified}` : null;
}

/** Products per page of a catalogue import (the API's maximum); the same for categories, pages, variations and the hooks list. */
const PRODUCTS_PER_PAGE = 100;
const ENTRIES_PER_PAGE = 100;
const VARIATIONS_PER_PAGE = 100;
const HOOKS_PER_PAGE = 100;

/** A listed product with the variations of a variable product (read right after its page). */
export interface PlatformCListed {
  product: any;
  variations: any[];
}

/**
 * Where each kind of entry is listed: product categories through the shop's API; content pages
 * through the site's own `wp/v2` API, which the shop's keys do not sign in to, so they are read
 * without credentials (sending the keys there would be refused as a wrong password): the pages a
 * visitor can see, which are the ones the widget can be on.
 */
const ENTRY_LISTS = { category: { api: 'wc/v3', path: '/products/categories' }, page: { api: 'wp/v2', path: '/pages' } } as const;

/** The default permalink base of product categories (a site can change it; the API does not say). */
const CATEGORY_BASE = 'product-category';

/**
 * A product category (`wc/v3/products/categories`) or a page (`wp/v2/pages`) -> catalogue entry.
 * Names and rendered titles carry HTML entities (`Tops &amp; Tees`): kept as text. A page has its
 * `link` and `modified_gmt`; a category has neither, so its URL is the default permalink.
 */
export function platformCEntry(item: any, siteUrl: string, type: 'category' | 'page'): EntryData {
  const entryId = idOf(item?.id);
  if (!entryId) throw new ApiError(400, 'missing_entry_id', 'the item carries no id');
  const handle = stringOrNull(item.slug, 255);
  const title = type === 'page' ? item.title?.rendered : item.name;
  const url = type === 'page' ? safeHttpUrl(stringOrNull(item.link)) : handle ? `${siteUrl.replace(/\/+$/, '')}/${CATEGORY_BASE}/${encodeURIComponent(handle)}/` : null;
  return { entryId, handle, title: htmlToLine(stringOrNull(title, 1000) ?? ''), url, updatedAt: type === 'page' ? isoToMillis(item.modified_gmt, true) : null };
}

/** Sites whose host answered 429 with Retry-After: no list call of any sync phase goes out before it has passed. */
const retryAfters = createHoldoffs();

/** A Retry-After header in ms: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** Platform C's REST API on the store's own site (consumer key + secret, HTTP Basic). */
export function platformCClient(options: { siteUrl: string; consumerKey: string; consumerSecret: string; timeoutMs?: number | undefined; retry?: RetryPolicy | undefined; via: CallRoute }) {
  const site = `${options.siteUrl.replace(/\/+$/, '')}/wp-json`;
  const base = `${site}/wc/v3`;
  const headers = { authorization: `Basic ${btoa(`${options.consumerKey}:${options.consumerSecret}`)}` };
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_MS;
  const { via } = options;
  /**
   * One page of a list (`cursor`: the page number, null for the first); `X-WP-TotalPages` says which
   * page is the last. A 429 (a host's rate limit in front of the site) waits for its Retry-After;
   * without one the caller backs off (never an immediate retry). A page of more than `perPage`
   * items is a broken answer.
   */
  async function listPage(api: 'wc/v3' | 'wp/v2', path: string, cursor: string | null, perPage: number, query: string): Promise<{ items: any[]; next: string | null }> {
    retryAfters.check(site);
    const page = cursor === null ? 1 : Number(cursor);
    const { status, body, headers: answer } = await callJson(`${site}/${api}${path}?per_page=${perPage}&${query}&page=${page}`, { headers: api === 'wc/v3' ? headers : {} }, { timeoutMs, expect: [200, 429], via });
    if (status === 429) {
      const retryAfter = retryAfterMs(answer.get('retry-after'));
      if (retryAfter === null) throw new PlatformThrottled(`GET ${path} answered 429 without Retry-After`, null);
      const waitMs = platformWaitMs(retryAfter);
      retryAfters.hold(site, waitMs);
      throw new PlatformThrottled('rate limited by the site', waitMs);
    }
    if (!Array.isArray(body)) throw new PlatformApiError(`GET ${path}: the response is not a list`);
    const totalPages = Number(answer.get('x-wp-totalpages') ?? page);
    return { items: atMost(body, perPage, `GET ${path}`), next: page < totalPages ? String(page + 1) : null };
  }
  return {
    /** One active hook per product topic to `deliveryUrl` signed with `secret`; existing ones are updated, not duplicated. */
    async registerHooks(deliveryUrl: string, secret: string): Promise<HookRegistration> {
      const { body } = await callJson(`${base}/webhooks?per_page=${HOOKS_PER_PAGE}`, { headers }, { timeoutMs, expect: [200], via });
      const hooks: any[] = atMost(Array.isArray(body) ? body : [], HOOKS_PER_PAGE, 'GET /webhooks');
      for (const topic of PLATFORM_C_HOOK_TOPICS) {
        // The hook's id goes into a URL path: only an id of the platform's shape is used.
        const existing = idOf(hooks.find((h) => h?.topic === topic && h?.delivery_url === deliveryUrl)?.id);
        if (existing) {
          await callJson(`${base}/webhooks/${existing}`, { method: 'PUT', headers, body: { status: 'active', secret } }, { timeoutMs, expect: [200], via });
        } else {
          await callJson(`${base}/webhooks`, { method: 'POST', headers, body: { name: `svc ${topic}`, topic, delivery_url: deliveryUrl, secret, status: 'active' } }, { timeoutMs, expect: [200, 201], via });
        }
      }
      return { topics: PLATFORM_C_HOOK_TOPICS };
    },
    /**
     * Deletes the site's hooks of svc's topics that deliver to `deliveryUrl` (`force=true`: hooks
     * have no trash), putting each topic in `removed` as soon as the site confirms it (404: already gone).
     */
    async unregisterHooks(deliveryUrl: string, removed: string[]): Promise<void> {
      const { body } = await callJson(`${base}/webhooks?per_page=${HOOKS_PER_PAGE}`, { headers }, { timeoutMs, expect: [200], via });
      const hooks: any[] = atMost(Array.isArray(body) ? body : [], HOOKS_PER_PAGE, 'GET /webhooks');
      for (const hook of hooks) {
        // The hook's id goes into a URL path: only an id of the platform's shape is used.
        const id = idOf(hook?.id);
        if (id === null || hook.delivery_url !== deliveryUrl || !PLATFORM_C_HOOK_TOPICS.includes(hook.topic)) continue;
        await callJson(`${base}/webhooks/${id}?force=true`, { method: 'DELETE', headers }, { timeoutMs, expect: [200, 404], via });
        removed.push(hook.topic);
      }
    },
    /** The product's current data, or null once the platform no longer has it (404). */
    async fetchProduct(productId: string): Promise<any | null> {
      const { status, body } = await callJson(`${base}/products/${productId}`, { headers }, { timeoutMs, expect: [200, 404], via });
      return status === 404 ? null : body;
    },
    /** Null while the site has the product (not in the trash); gone once deleted for good (404) or trashed (platformCGone). */
    async productGone(productId: string): Promise<ProductGone | null> {
      const data = await this.fetchProduct(productId);
      return data === null ? { at: null } : platformCGone(data);
    },
    /** One page of the products in id order, each variable product with its variations. */
    async listProducts(cursor: string | null): Promise<CatalogPage<PlatformCListed>> {
      const { items: products, next } = await listPage('wc/v3', '/products', cursor, PRODUCTS_PER_PAGE, 'orderby=id&order=asc');
      const items: PlatformCListed[] = [];
      for (const product of products) items.push({ product, variations: hasVariations(product) ? await this.fetchVariations(String(product.id)) : [] });
      return { items, next, waitMs: 0 };
    },
    /** One page of the product categories or of the site's published pages, in id order. */
    async listEntries(type: 'category' | 'page', cursor: string | null): Promise<CatalogPage<unknown>> {
      const { api, path } = ENTRY_LISTS[type];
      const fields = type === 'page' ? '&_fields=id,slug,link,title,modified_gmt' : '';
      return { ...(await listPage(api, path, cursor, ENTRIES_PER_PAGE, `orderby=id&order=asc${fields}`)), waitMs: 0 };
    },
    /** True once the category is gone (404), or the page is gone or no longer public (404, 401). */
    async entryGone(type: 'category' | 'page', entryId: string): Promise<boolean> {
      const { api, path } = ENTRY_LISTS[type];
      const { status } = await callJson(`${site}/${api}${path}/${entryId}`, { headers: api === 'wc/v3' ? headers : {} }, { timeoutMs, expect: [200, 401, 404], via });
      return status !== 200;
    },
    /**
     * Every variation of a variable product, page by page (100 per page, the API's maximum), at most
     * MAX_VARIANTS. A page that starts where the one before did does not advance: a broken answer.
     */
    async fetchVariations(productId: string): Promise<any[]> {
      const all: any[] = [];
      let firstOfPage: unknown;
      for (let page = 1; all.length < MAX_VARIANTS; page++) {
        const { body } = await callJson(`${base}/products/${productId}/variations?per_page=${VARIATIONS_PER_PAGE}&page=${page}`, { headers }, { timeoutMs, expect: [200], via });
        const items: any[] = atMost(Array.isArray(body) ? body : [], VARIATIONS_PER_PAGE, 'GET /variations');
        if (page > 1 && items.length > 0 && idOf(items[0]?.id) === idOf(firstOfPage)) throw new PlatformProtocolError('GET /variations: the next page does not advance (it starts where the page before did)');
        firstOfPage = items[0]?.id;
        all.push(...items);
        if (items.length < VARIATIONS_PER_PAGE) break;
      }
      return all;
    },
    async fetchCurrency(): Promise<string | null> {
      const { body } = await callJson(`${base}/settings/general/woocommerce_currency`, { headers }, { timeoutMs, expect: [200], via });
      return stringOrNull(body?.value, 3);
    },
  };
}
