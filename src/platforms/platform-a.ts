import { ApiError } from '../lib/errors.ts';
import { backoffMs } from '../lib/backoff.ts';
import { sleep } from '../lib/abort.ts';
import { DEFAULT_API_TIMEOUT_MS, DEFAULT_RETRY, PlatformApiError, PlatformProtocolError, PlatformThrottled, atMost, callJson, idOf, isoToMillis, platformWaitMs, stringOrNull, type CallRoute, type RetryPolicy } from './http.ts';
import type { EntryData } from '../catalog/entry-data.ts';
import { MAX_VARIANTS, type Availability, type ProductData } from '../catalog/product-data.ts';
import { isIdOnly, isObject } from './payload-shapes.ts';
import type { CatalogPage, HookRegistration, ProductGone, RefusalReason, WebhookEvent } from './types.ts';
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
export function platformAProduct(payload: any, shopDomain: string, receivedAt: number, payloadJson?: string | Uint8Array): ProductData {
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
    ...(payloadJson !== undefined && { rawJson: payloadJson }),
  };
}

/**
 * The Shop resource's permanent domain (`<name>.<suffix>`); its `domain` is the primary one, which
 * may be the shop's own (custom) domain.
 */
const PERMANENT_DOMAIN_FIELD = 'myplatform-a_domain';

/** The privacy topics' bodies, told apart by what they carry (each names its shop as `shop_domain`). */
const PRIVACY_SHAPES = new Map<string, (payload: Record<string, unknown>) => boolean>([
  ['customers/data_request', (p) => isObject(p.customer) && isObject(p.data_request)],
  ['customers/redact', (p) => isObject(p.customer) && p.data_request === undefined],
  ['shop/redact', (p) => p.customer === undefined && p.data_request === undefined],
]);

const refused = (reason: RefusalReason): WebhookEvent => ({ kind: 'refused', reason });
const sameShop = (named: unknown, shopDomain: string) => typeof named === 'string' && named.trim().toLowerCase() === shopDomain;

/** The REST Product resource: a title and a variants list (every product has one), and, when it gives its global id, a Product's. */
function isProductResource(payload: Record<string, unknown>): boolean {
  if (typeof payload.title !== 'string' || !Array.isArray(payload.variants)) return false;
  return payload.admin_graphql_api_id === undefined || payload.admin_graphql_api_id === `gid://platform-a/Product/${idOf(payload.id)}`;
}

/**
 * app/uninstalled: the Shop resource (an id and its domains), of the shop the header names. Stores
 * of svc's app share one secret, so the header alone would let a body signed for one shop uninstall
 * another.
 */
function shopRefusal(payload: Record<string, unknown>, shopDomain: string): WebhookEvent | null {
  const domains = [payload[PERMANENT_DOMAIN_FIELD], payload.domain].filter((d) => typeof d === 'string');
  if (idOf(payload.id) === null || domains.length === 0) return refused('body_not_for_topic');
  return domains.some((d) => sameShop(d, shopDomain)) ? null : refused('other_shop');
}

/** A privacy topic: the topic's own body (PRIVACY_SHAPES), naming the header's shop. */
function privacyRefusal(isTopicBody: (payload: Record<string, unknown>) => boolean, payload: Record<string, unknown>, shopDomain: string): WebhookEvent | null {
  if (typeof payload.shop_domain !== 'string' || !isTopicBody(payload)) return refused('body_not_for_topic');
  return sameShop(payload.shop_domain, shopDomain) ? null : refused('other_shop');
}

/**
 * Topic + verified payload -> event. The topic header is not signed: a body whose shape is not the
 * topic's own is refused (a product body under products/delete or app/uninstalled, a delete body
 * under products/update...), and so is a shop or privacy body naming another shop than the header;
 * a body of the topic's shape without the id it needs is malformed (400). `eventAt` orders deletes (the triggered-at header, else receipt); `payloadJson`, the payload as
 * received (its text or UTF-8 bytes), is kept as the product's raw payload.
 */
export function platformAEvent(topic: string, payload: Record<string, unknown>, shopDomain: string, eventAt: number, payloadJson?: string | Uint8Array): WebhookEvent {
  switch (topic) {
    case 'products/create':
    case 'products/update':
      if (!isProductResource(payload)) return refused('body_not_for_topic');
      return { kind: 'product.upsert', product: platformAProduct(payload, shopDomain, eventAt, payloadJson) };
    case 'products/delete': {
      if (!isIdOnly(payload)) return refused('body_not_for_topic');
      const productId = idOf(payload.id);
      if (!productId) throw new ApiError(400, 'missing_product_id', 'the payload carries no product id');
      return { kind: 'product.remove', productId, at: eventAt };
    }
    case 'app/uninstalled':
      return shopRefusal(payload, shopDomain) ?? { kind: 'store.uninstalled' };
  }
  const privacyShape = PRIVACY_SHAPES.get(topic);
  if (privacyShape) return privacyRefusal(privacyShape, payload, shopDomain) ?? { kind: 'privacy' };
  if (ORDER_TOPICS.has(topic)) {
    // The Order resource: its line items (a product has variants, a shop or a delete body neither).
    if (!Array.isArray(payload.line_items)) return refused('body_not_for_topic');
    const orderId = idOf(payload.id);
    if (!orderId) throw new ApiError(400, 'missing_order_id', 'the payload carries no order id');
    return { kind: 'order', orderId, status: stringOrNull(payload.financial_status, 64) };
  }
  return { kind: 'unhandled' };
}

/** Products per page of a catalogue import, and variants/images read with each (more variants are read page by page). */
const PRODUCTS_PER_PAGE = 10;
const VARIANTS_PER_PRODUCT = 25;
const IMAGES_PER_PRODUCT = 10;

const VARIANT_FIELDS = `id title price compareAtPrice sku barcode inventoryQuantity inventoryPolicy inventoryItem { tracked } selectedOptions { name value } image { id }`;
const LIST_PRODUCTS = `query SyncProducts($first: Int!, $after: String) {
  products(first: $first, after: $after, sortKey: ID) {
    pageInfo { hasNextPage endCursor }
    nodes { id handle title descriptionHtml vendor updatedAt options { name values }
      images(first: ${IMAGES_PER_PRODUCT}) { nodes { id url } }
      variants(first: ${VARIANTS_PER_PRODUCT}) { pageInfo { hasNextPage endCursor } nodes { ${VARIANT_FIELDS} } } } } }`;
/** Variants per query once a product's first page of them is read. */
const MORE_VARIANTS_PER_PAGE = 100;
const MORE_VARIANTS = `query SyncVariants($id: ID!, $after: String) {
  product(id: $id) { variants(first: ${MORE_VARIANTS_PER_PAGE}, after: $after) { pageInfo { hasNextPage endCursor } nodes { ${VARIANT_FIELDS} } } } }`;

/** Collections and pages per page of a catalogue import: a query costs about 2 + 1 per entry, well inside any bucket. */
const ENTRIES_PER_PAGE = 50;
const entriesQuery = (connection: 'collections' | 'pages') => `query SyncEntries($first: Int!, $after: String) {
  ${connection}(first: $first, after: $after, sortKey: ID) { pageInfo { hasNextPage endCursor } nodes { id handle title updatedAt } } }`;
const LIST_ENTRIES = { collections: entriesQuery('collections'), pages: entriesQuery('pages') };

/** The storefront path of each kind of entry (`/collections/<handle>`, `/pages/<handle>`), as the widget detects them. */
const ENTRY_PATHS = { category: 'collections', page: 'pages' } as const;

/** A `collections` or `pages` node -> catalogue entry; its URL is the shop's storefront path for the handle. */
export function platformAEntry(node: any, shopDomain: string, type: keyof typeof ENTRY_PATHS): EntryData {
  const entryId = platformAEntryId(node);
  if (!entryId) throw new ApiError(400, 'missing_entry_id', 'the node carries no id');
  const handle = stringOrNull(node.handle, 255);
  return {
    entryId,
    handle,
    title: stringOrNull(node.title, 1000) ?? '',
    url: handle ? `https://${shopDomain}/${ENTRY_PATHS[type]}/${encodeURIComponent(handle)}` : null,
    updatedAt: isoToMillis(node.updatedAt),
  };
}

/** The numeric id at the end of a global id (`gid://platform-a/Product/123` -> `123`). */
const legacyId = (gid: unknown): string | null => (typeof gid === 'string' ? idOf(gid.slice(gid.lastIndexOf('/') + 1)) : null);

/** The id a `collections` or `pages` node is kept under (what platformAEntry keys it by), or null. */
export const platformAEntryId = (node: any): string | null => legacyId(node?.id);

/**
 * A GraphQL Admin API product node in the shape of the REST Product resource the webhooks carry,
 * so one mapper (`platformAProduct`) reads both: variants get `option1..3` in the order of the
 * product's options and their image as `image_id`; tracked inventory becomes `inventory_management`.
 */
export function restProductOf(node: any, variants: any[]): Record<string, unknown> {
  const optionNames: string[] = (Array.isArray(node.options) ? node.options : []).map((o: any) => String(o?.name ?? ''));
  return {
    id: legacyId(node.id),
    title: node.title,
    handle: node.handle,
    body_html: node.descriptionHtml,
    vendor: node.vendor,
    updated_at: node.updatedAt,
    admin_graphql_api_id: node.id,
    options: (Array.isArray(node.options) ? node.options : []).map((o: any) => ({ name: o?.name, values: o?.values })),
    images: (node.images?.nodes ?? []).map((i: any) => ({ id: legacyId(i?.id), src: i?.url })),
    variants: variants.map((v: any) => {
      const selected: any[] = Array.isArray(v?.selectedOptions) ? v.selectedOptions : [];
      const optionAt = (i: number) => selected.find((o) => o?.name === optionNames[i])?.value ?? null;
      return {
        id: legacyId(v?.id),
        title: v?.title,
        price: v?.price,
        compare_at_price: v?.compareAtPrice,
        sku: v?.sku,
        barcode: v?.barcode,
        inventory_quantity: v?.inventoryQuantity,
        inventory_policy: typeof v?.inventoryPolicy === 'string' ? v.inventoryPolicy.toLowerCase() : null,
        inventory_management: v?.inventoryItem?.tracked ? 'platform-a' : null,
        option1: optionAt(0),
        option2: optionAt(1),
        option3: optionAt(2),
        image_id: legacyId(v?.image?.id),
      };
    }),
  };
}

/** The cost bucket as the platform last reported it for a shop, and when (`at`: performance.now() at receipt). */
interface BucketState {
  available: number;
  maximum: number;
  restoreRate: number;
  at: number;
}

/** A response's `extensions.cost.throttleStatus`, or null when it carries none (or one that says nothing usable). */
function bucketOf(extensions: any, at: number): BucketState | null {
  const status = extensions?.cost?.throttleStatus;
  const state = { available: Number(status?.currentlyAvailable), maximum: Number(status?.maximumAvailable), restoreRate: Number(status?.restoreRate), at };
  return Object.values(state).every(Number.isFinite) && state.restoreRate > 0 ? state : null;
}

/**
 * How long until the bucket holds `cost` points (0 when it does now), refilling at its restore rate
 * since it was reported. A cost above the bucket's size waits for a full bucket.
 */
export function throttleWaitMs(bucket: BucketState, cost: number, now: number): number {
  const available = Math.min(bucket.maximum, bucket.available + ((now - bucket.at) / 1000) * bucket.restoreRate);
  const needed = Math.min(cost, bucket.maximum);
  return available >= needed ? 0 : Math.ceil(((needed - available) / bucket.restoreRate) * 1000);
}

/**
 * What the platform last said about each shop's bucket (by API URL and token), and what each of
 * svc's queries costs (requestedQueryCost): kept for the process's life, so a query is sent only
 * when the bucket can pay for it, across job steps. One entry per connected shop and per query text.
 */
const shopBuckets = new Map<string, BucketState>();
const queryCosts = new Map<string, number>();

const isThrottled = (body: any) => Array.isArray(body?.errors) && body.errors.some((e: any) => e?.extensions?.code === 'THROTTLED');

const HOOKS_PER_QUERY = 250;
const LIST_HOOKS = `query { webhookSubscriptions(first: ${HOOKS_PER_QUERY}) { edges { node { id topic endpoint { __typename ... on WebhookHttpEndpoint { callbackUrl } } } } } }`;
const CREATE_HOOK = `mutation webhookSubscriptionCreate($topic: WebhookSubscriptionTopic!, $webhookSubscription: WebhookSubscriptionInput!) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: $webhookSubscription) { webhookSubscription { id } userErrors { field message } } }`;
const DELETE_HOOK = `mutation webhookSubscriptionDelete($id: ID!) { webhookSubscriptionDelete(id: $id) { deletedWebhookSubscriptionId userErrors { field message } } }`;
const SHOP_CURRENCY = `query { shop { currencyCode } }`;
const PRODUCT_EXISTS = `query ProductExists($id: ID!) { product(id: $id) { id } }`;

const graphQlTopic = (topic: string) => topic.toUpperCase().replace('/', '_');
/** A topic svc subscribes to (its REST name), for a GraphQL topic enum value; null for any other. */
const subscribedTopic = (graphQl: unknown): string | null => PLATFORM_A_HOOK_TOPICS.find((topic) => graphQlTopic(topic) === graphQl) ?? null;

/** The error code of a GraphQL error when it has the shape of one (`THROTTLED`, `ACCESS_DENIED`): never its message, which is the platform's text. */
const errorCodeOf = (error: any): string => {
  const code = error?.extensions?.code;
  return typeof code === 'string' && /^[A-Z_]{1,40}$/.test(code) ? ` (${code})` : '';
};

/** Platform A's GraphQL Admin API for one shop, authenticated with the store's access token. */
export function platformAClient(options: { apiBase: string; accessToken: string; timeoutMs?: number | undefined; retry?: RetryPolicy | undefined; via: CallRoute }) {
  const url = `${options.apiBase}/admin/api/${PLATFORM_A_API_VERSION}/graphql.json`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_MS;
  const retry = options.retry ?? DEFAULT_RETRY;
  const { via } = options;
  const shop = `${url} ${options.accessToken}`;
  /** How long before `query` fits the shop's bucket as last reported (a query of unknown cost waits for a full bucket). */
  const waitFor = (query: string): number => {
    const bucket = shopBuckets.get(shop);
    return bucket ? throttleWaitMs(bucket, queryCosts.get(query) ?? bucket.maximum, performance.now()) : 0;
  };
  /**
   * The whole response (data and extensions). A query the bucket cannot pay for yet is not sent:
   * with `wait: 'throw'` PlatformThrottled says how long to wait (the caller schedules the retry),
   * otherwise the call waits here. A query the platform refused as throttled is handled the same
   * way, for at most `retry.attempts` refusals: by the bucket it reported, or, when it reported none
   * that explains the refusal, with exponential backoff and jitter (the worst is assumed, never an
   * immediate retry).
   */
  const request = async (query: string, variables: Record<string, unknown> | undefined, wait: 'throw' | 'here' = 'here'): Promise<any> => {
    for (let attempt = 1; ; attempt++) {
      const waitMs = waitFor(query);
      if (waitMs > 0 && wait === 'throw') throw new PlatformThrottled('waiting for the GraphQL cost bucket to refill', platformWaitMs(waitMs), false);
      if (waitMs > 0) await sleep(platformWaitMs(waitMs), via.signal);
      const { body } = await callJson(url, { method: 'POST', headers: { [PLATFORM_A_HEADERS.accessToken]: options.accessToken }, body: { query, variables } }, { timeoutMs, expect: [200], via });
      // The bucket is reported as of some moment before the answer arrived: dating it now counts less refill than there was (the safe side).
      // Timed on the monotonic clock: Date.now() is cut to whole milliseconds (it could date the report up to 1 ms before it was made) and can step.
      const bucket = bucketOf(body?.extensions, performance.now());
      if (bucket) shopBuckets.set(shop, bucket);
      const cost = Number(body?.extensions?.cost?.requestedQueryCost);
      if (Number.isFinite(cost) && cost > 0) queryCosts.set(query, cost);
      if (isThrottled(body)) {
        const refill = waitFor(query);
        const known = refill > 0 ? platformWaitMs(refill) : null;
        if (wait === 'throw') throw new PlatformThrottled('the GraphQL query was throttled', known);
        if (attempt >= retry.attempts) throw new PlatformThrottled(`the GraphQL query was throttled ${attempt} times in a row`, known);
        await sleep(known ?? backoffMs(attempt, retry.baseMs, retry.maxMs), via.signal);
        continue;
      }
      if (Array.isArray(body?.errors) && body.errors.length) throw new PlatformApiError(`the GraphQL query answered an error${errorCodeOf(body.errors[0])}`);
      return body;
    }
  };
  const graphql = async (query: string, variables?: Record<string, unknown>) => (await request(query, variables))?.data;
  /** A connection's page: where the next starts, and how long the bucket needs before that query can be paid for. */
  const pageOf = <T>(connection: any, items: T[], query: string): CatalogPage<T> => {
    const next = connection.pageInfo?.hasNextPage ? stringOrNull(connection.pageInfo.endCursor, 1024) : null;
    return { items, next, waitMs: next === null ? 0 : waitFor(query) };
  };
  /** The nodes of a connection the query asked `first` of: more is a broken answer. */
  const nodesOf = (connection: any, first: number, what: string): any[] => atMost(Array.isArray(connection?.nodes) ? connection.nodes : [], first, what);

  /**
   * Variants beyond the first page of a product's, page by page, waiting here for the bucket between
   * pages (rare: products with many variants). Each page must bring variants and a cursor not seen
   * before, or the list does not advance: a broken answer, not a reason to ask forever.
   */
  async function remainingVariants(productGid: string, after: string): Promise<any[]> {
    const variants: any[] = [];
    const seen = new Set<string>();
    let cursor: string | null = after;
    while (cursor !== null && variants.length < MAX_VARIANTS) {
      seen.add(cursor);
      const body = await request(MORE_VARIANTS, { id: productGid, after: cursor });
      const connection = body?.data?.product?.variants;
      const nodes = nodesOf(connection, MORE_VARIANTS_PER_PAGE, 'GraphQL product variants');
      const next: string | null = connection?.pageInfo?.hasNextPage ? stringOrNull(connection.pageInfo.endCursor, 1024) : null;
      if (next !== null && (nodes.length === 0 || seen.has(next))) throw new PlatformProtocolError('GraphQL product variants: the next page does not advance (an empty page, or a cursor given before)');
      variants.push(...nodes);
      cursor = next;
    }
    return variants;
  }
  return {
    /** Creates the subscriptions that are missing for `callbackUrl`; existing ones are kept (idempotent). */
    async registerHooks(callbackUrl: string): Promise<HookRegistration> {
      const data = await graphql(LIST_HOOKS);
      const edges = atMost(Array.isArray(data?.webhookSubscriptions?.edges) ? data.webhookSubscriptions.edges : [], HOOKS_PER_QUERY, 'GraphQL webhookSubscriptions');
      const existing = new Set<string>(
        edges
          .filter((e: any) => e?.node?.endpoint?.callbackUrl === callbackUrl)
          .map((e: any) => String(e.node.topic)),
      );
      for (const topic of PLATFORM_A_HOOK_TOPICS) {
        if (existing.has(graphQlTopic(topic))) continue;
        const created = await graphql(CREATE_HOOK, { topic: graphQlTopic(topic), webhookSubscription: { callbackUrl, format: 'JSON' } });
        const userErrors = created?.webhookSubscriptionCreate?.userErrors ?? [];
        if (Array.isArray(userErrors) && userErrors.length) throw new PlatformApiError(`webhookSubscriptionCreate ${topic}: the platform refused the subscription`);
      }
      return { topics: PLATFORM_A_HOOK_TOPICS };
    },
    /**
     * Deletes the shop's subscriptions to svc's topics that deliver to `callbackUrl`, putting each
     * topic in `removed` as soon as the platform confirms it (so a failure part-way says what is left).
     */
    async unregisterHooks(callbackUrl: string, removed: string[]): Promise<void> {
      const data = await graphql(LIST_HOOKS);
      const edges: any[] = atMost(Array.isArray(data?.webhookSubscriptions?.edges) ? data.webhookSubscriptions.edges : [], HOOKS_PER_QUERY, 'GraphQL webhookSubscriptions');
      for (const edge of edges) {
        const topic = subscribedTopic(edge?.node?.topic);
        const id = stringOrNull(edge?.node?.id, 200);
        if (topic === null || id === null || edge.node.endpoint?.callbackUrl !== callbackUrl) continue;
        const deleted = await graphql(DELETE_HOOK, { id });
        const userErrors = deleted?.webhookSubscriptionDelete?.userErrors ?? [];
        if (Array.isArray(userErrors) && userErrors.length) throw new PlatformApiError(`webhookSubscriptionDelete ${topic}: the platform refused to delete the subscription`);
        removed.push(topic);
      }
    },
    async fetchCurrency(): Promise<string | null> {
      const data = await graphql(SHOP_CURRENCY);
      return stringOrNull(data?.shop?.currencyCode, 3);
    },
    /** Null while the shop has the product; once it is deleted (the API answers `product: null`), when, which the API does not say. */
    async productGone(productId: string): Promise<ProductGone | null> {
      const data = await graphql(PRODUCT_EXISTS, { id: `gid://platform-a/Product/${productId}` });
      return data?.product === null ? { at: null } : null;
    },

    /**
     * One page of the shop's products (`cursor`: the previous page's end cursor, null for the first),
     * as REST-shaped products; `waitMs` is how long the cost bucket needs before the next page.
     */
    async listProducts(cursor: string | null): Promise<CatalogPage<Record<string, unknown>>> {
      const body = await request(LIST_PRODUCTS, { first: PRODUCTS_PER_PAGE, after: cursor }, 'throw');
      const connection = body?.data?.products;
      if (!connection || !Array.isArray(connection.nodes)) throw new PlatformApiError('GraphQL products: the response has no products connection');
      const items: Record<string, unknown>[] = [];
      for (const node of nodesOf(connection, PRODUCTS_PER_PAGE, 'GraphQL products')) {
        nodesOf(node?.images, IMAGES_PER_PRODUCT, 'GraphQL product images');
        let variants: any[] = nodesOf(node?.variants, VARIANTS_PER_PRODUCT, 'GraphQL product variants');
        if (node?.variants?.pageInfo?.hasNextPage) variants = variants.concat(await remainingVariants(String(node.id), String(node.variants.pageInfo.endCursor)));
        items.push(restProductOf(node, variants));
      }
      return pageOf(connection, items, LIST_PRODUCTS);
    },

    /** One page of the shop's collections or content pages (`cursor` as for products), as GraphQL nodes. */
    async listEntries(connectionName: keyof typeof LIST_ENTRIES, cursor: string | null): Promise<CatalogPage<unknown>> {
      const query = LIST_ENTRIES[connectionName];
      const body = await request(query, { first: ENTRIES_PER_PAGE, after: cursor }, 'throw');
      const connection = body?.data?.[connectionName];
      if (!connection || !Array.isArray(connection.nodes)) throw new PlatformApiError(`GraphQL ${connectionName}: the response has no ${connectionName} connection`);
      return pageOf(connection, nodesOf(connection, ENTRIES_PER_PAGE, `GraphQL ${connectionName}`), query);
    },
  };
}
