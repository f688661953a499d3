import { createHmac } from 'node:crypto';
import { json, postDelivery, startFake, type Outage } from './http.ts';

export interface FakeShop {
  domain: string;
  accessToken: string;
  /** The store's own app's client secret: what the platform signs deliveries with. */
  clientSecret: string;
  currency: string;
  /** The shop's products as the REST Product resource (payloads.ts); the GraphQL products list serves them by id. */
  products?: any[];
  /** The shop's collections and online store pages (payloads.ts), served by the GraphQL `collections` and `pages` lists by id. */
  collections?: any[];
  pages?: any[];
}

/** The GraphQL connections of collections and pages, and the node type of each. */
export type EntryConnection = 'collections' | 'pages';
const ENTRY_NODE_TYPES: Record<EntryConnection, string> = { collections: 'Collection', pages: 'Page' };

/** The shop's GraphQL cost bucket: `maximumAvailable` points, refilled at `restoreRate` per second. */
export interface CostBucket {
  maximumAvailable: number;
  restoreRate: number;
}

/** A products (or collections, pages) page about to be answered (its body already built from the list as it is now). */
export interface ProductsPageRequest {
  shop: string;
  connection: 'products' | EntryConnection;
  after: string | null;
  /** How many products come before this page. */
  offset: number;
}

export interface Subscription {
  id: string;
  shop: string;
  topic: string;
  callbackUrl: string;
}

export interface SendOptions {
  eventId?: string;
  triggeredAt?: string;
  /** Sign with this secret instead of the shop's (tamper tests). */
  secret?: string;
  /** Replace (or with null, drop) headers after signing. */
  headers?: Record<string, string | null>;
  /** Send this body instead of the JSON of the payload; it is what gets signed unless `signedBody` is set. */
  body?: string;
  /** Sign these bytes while sending `body` (a body altered in transit). */
  signedBody?: string;
}

const restTopic = (graphQl: string) => graphQl.toLowerCase().replace('_', '/');

const gid = (type: string, id: unknown) => `gid://platform-a/${type}/${id}`;
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify({ last_id: value })).toString('base64');
const cursorValue = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64').toString()).last_id;
const firstOf = (query: string, field: string, fallback: number) => Number(new RegExp(`${field}\\(first: (\\d+)`).exec(query)?.[1] ?? fallback);

/** A REST-shaped variant as the GraphQL Admin API's ProductVariant node. */
function variantNode(product: any, variant: any) {
  const names: string[] = (product.options ?? []).map((o: any) => o.name);
  return {
    id: gid('ProductVariant', variant.id),
    title: variant.title,
    price: variant.price,
    compareAtPrice: variant.compare_at_price,
    sku: variant.sku,
    barcode: variant.barcode,
    inventoryQuantity: variant.inventory_quantity,
    inventoryPolicy: String(variant.inventory_policy).toUpperCase(),
    inventoryItem: { tracked: variant.inventory_management !== null },
    selectedOptions: names.map((name, i) => ({ name, value: variant[`option${i + 1}`] })).filter((o) => o.value !== null),
    image: variant.image_id ? { id: gid('ProductImage', variant.image_id) } : null,
  };
}

/** A page of a product's variants as a GraphQL connection (cursor: the index of the last one). */
function variantConnection(product: any, first: number, after: string | null) {
  const start = after === null ? 0 : Number(after) + 1;
  const slice = (product.variants ?? []).slice(start, start + first);
  return { pageInfo: { hasNextPage: start + first < (product.variants ?? []).length, endCursor: String(start + slice.length - 1) }, nodes: slice.map((v: any) => variantNode(product, v)) };
}

/** A REST Product resource as the GraphQL Admin API's Product node (times in UTC, as the API gives them). */
function productNode(product: any, query: string) {
  return {
    id: gid('Product', product.id),
    handle: product.handle,
    title: product.title,
    descriptionHtml: product.body_html,
    vendor: product.vendor,
    updatedAt: new Date(product.updated_at).toISOString().replace('.000Z', 'Z'),
    options: (product.options ?? []).map((o: any) => ({ name: o.name, values: o.values })),
    images: { nodes: (product.images ?? []).slice(0, firstOf(query, 'images', 10)).map((i: any) => ({ id: gid('ProductImage', i.id), url: i.src })) },
    variants: variantConnection(product, firstOf(query, 'variants', 100), null),
  };
}

/** What a query costs: 2 for the connection plus `perItem` for each product (or variant) it may return; 1 for anything else. */
function queryCost(query: string, variables: any, perItem: number) {
  if (query.includes('products(')) return 2 + Number(variables?.first ?? 0) * perItem;
  if (query.includes('collections(') || query.includes('pages(')) return 2 + Number(variables?.first ?? 0);
  if (query.includes('product(')) return query.includes('variants(') ? 2 + firstOf(query, 'variants', 100) : 1;
  return 10;
}

/**
 * Platform A: the GraphQL Admin API calls svc makes (list/create/delete webhook subscriptions, shop
 * currency, products and one product by id), authenticated by `X-Platform-A-Access-Token`, and signed deliveries like the platform's.
 */
export function startFakePlatformA(shops: FakeShop[]) {
  const subscriptions: Subscription[] = [];
  const outage: Outage = { status: null };
  /** Realistic defaults (a standard shop's 1000 points, 50 per second); tests shrink and speed it up. */
  const bucket: CostBucket & { perProduct: number } = { maximumAvailable: 1000, restoreRate: 50, perProduct: 9 };
  const buckets = new Map<string, { available: number; at: number }>();
  const stats = {
    /** `after` of every products page answered with data, in order (null: the first page). */
    productPages: [] as (string | null)[],
    /** The same for the collections and pages lists. */
    entryPages: { collections: [] as (string | null)[], pages: [] as (string | null)[] },
    /** Queries that arrived when the bucket could not pay for them (refused as THROTTLED): a client honouring the throttle status makes none. */
    requestsWhileEmpty: 0,
    /** The lowest the bucket went (a test checks it was really drained). */
    lowestAvailable: Infinity,
    /** Queries for one product by its id (`product(id:)`). */
    productLookups: 0,
    /** Every authenticated query that arrived, answered or not. */
    queries: 0,
  };
  type PageHook = ((page: ProductsPageRequest) => Promise<Response | void> | Response | void) | null;
  type QueryHook = ((query: { shop: string; query: string; variables: any }) => Promise<Response | void> | Response | void) | null;
  /**
   * Called before a products (or collections, pages) page is answered; a Response replaces the
   * answer (a failure mid-way). `beforeQuery` sees every authenticated query first (a platform
   * misbehaving in any way a test needs).
   */
  const hooks: { beforeProductsPage: PageHook; beforeEntriesPage: PageHook; beforeQuery: QueryHook } = { beforeProductsPage: null, beforeEntriesPage: null, beforeQuery: null };

  /** Charge the shop's bucket for a query; the throttle status to report, or null when it cannot pay (THROTTLED). */
  function charge(shop: string, cost: number) {
    const now = performance.now();
    const state = buckets.get(shop) ?? { available: bucket.maximumAvailable, at: now };
    state.available = Math.min(bucket.maximumAvailable, state.available + ((now - state.at) / 1000) * bucket.restoreRate);
    state.at = now;
    buckets.set(shop, state);
    const ok = state.available >= cost;
    if (ok) state.available -= cost;
    stats.lowestAvailable = Math.min(stats.lowestAvailable, state.available);
    const throttleStatus = { maximumAvailable: bucket.maximumAvailable, currentlyAvailable: Math.floor(state.available), restoreRate: bucket.restoreRate };
    return { ok, extensions: { cost: { requestedQueryCost: cost, actualQueryCost: ok ? cost : null, throttleStatus } } };
  }

  /** One page of a connection over `list` in id order, by the `last_id` cursor the platform's cursors carry. */
  async function connectionPage(shop: FakeShop, connection: ProductsPageRequest['connection'], list: any[], toNode: (item: any) => unknown, variables: any, extensions: unknown): Promise<Response> {
    const first = Math.min(Number(variables?.first ?? 50), 250);
    const after: string | null = variables?.after ?? null;
    const sorted = [...list].sort((a, b) => a.id - b.id);
    const offset = after === null ? 0 : sorted.filter((p) => p.id <= cursorValue(after)).length;
    const slice = sorted.slice(offset, offset + first);
    const body = {
      data: { [connection]: { pageInfo: { hasNextPage: offset + first < sorted.length, endCursor: slice.length ? cursorOf(slice[slice.length - 1].id) : null }, nodes: slice.map(toNode) } },
      extensions,
    };
    const replaced = await (connection === 'products' ? hooks.beforeProductsPage : hooks.beforeEntriesPage)?.({ shop: shop.domain, connection, after, offset });
    if (replaced) return replaced;
    if (connection === 'products') stats.productPages.push(after);
    else stats.entryPages[connection].push(after);
    return json(200, body);
  }

  let nextId = 1;
  let eventCounter = 1;

  const fake = startFake(async (request, url) => {
    if (request.method !== 'POST' || !/^\/admin\/api\/[\d-]+\/graphql\.json$/.test(url.pathname)) return json(404, { errors: 'Not Found' });
    const shop = shops.find((s) => s.accessToken === request.headers.get('x-platform-a-access-token'));
    if (!shop) return json(401, { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
    if (outage.status) return json(outage.status, { errors: 'Internal Server Error' });
    const { query, variables } = (await request.json()) as { query: string; variables?: any };
    stats.queries++;
    const replaced = await hooks.beforeQuery?.({ shop: shop.domain, query, variables });
    if (replaced) return replaced;
    const cost = charge(shop.domain, queryCost(query, variables, bucket.perProduct));
    if (!cost.ok) {
      stats.requestsWhileEmpty++;
      return json(200, { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://platform-a.example/api/usage/rate-limits' } }], extensions: cost.extensions });
    }
    if (query.includes('products(')) return connectionPage(shop, 'products', shop.products ?? [], (p) => productNode(p, query), variables, cost.extensions);
    for (const connection of ['collections', 'pages'] as const) {
      if (!query.includes(`${connection}(`)) continue;
      const node = (item: any) => ({ id: gid(ENTRY_NODE_TYPES[connection], item.id), handle: item.handle, title: item.title, updatedAt: new Date(item.updated_at).toISOString().replace('.000Z', 'Z') });
      return connectionPage(shop, connection, shop[connection] ?? [], node, variables, cost.extensions);
    }
    if (query.includes('product(')) {
      // One product by its global id; `product: null` once the shop no longer has it (deleted).
      const product = (shop.products ?? []).find((p) => gid('Product', p.id) === variables?.id);
      stats.productLookups++;
      return json(200, { data: { product: product ? { id: gid('Product', product.id), variants: variantConnection(product, 100, variables?.after ?? null) } : null }, extensions: cost.extensions });
    }
    // Every answer reports the query's cost and the bucket, as the platform's do.
    const reply = (body: Record<string, unknown>) => json(200, { ...body, extensions: cost.extensions });
    if (query.includes('webhookSubscriptionCreate')) {
      const callbackUrl = variables?.webhookSubscription?.callbackUrl;
      if (!/^https?:\/\//.test(callbackUrl ?? '')) {
        return reply({ data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['callbackUrl'], message: 'Address is invalid' }] } } });
      }
      const duplicate = subscriptions.some((s) => s.shop === shop.domain && s.topic === variables.topic && s.callbackUrl === callbackUrl);
      if (duplicate) {
        return reply({ data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['callbackUrl'], message: 'Address for this topic has already been taken' }] } } });
      }
      const sub = { id: `gid://platform-a/WebhookSubscription/${nextId++}`, shop: shop.domain, topic: variables.topic, callbackUrl };
      subscriptions.push(sub);
      return reply({ data: { webhookSubscriptionCreate: { webhookSubscription: { id: sub.id }, userErrors: [] } } });
    }
    if (query.includes('webhookSubscriptionDelete')) {
      const at = subscriptions.findIndex((s) => s.shop === shop.domain && s.id === variables?.id);
      if (at === -1) return reply({ data: { webhookSubscriptionDelete: { deletedWebhookSubscriptionId: null, userErrors: [{ field: ['id'], message: 'Webhook subscription does not exist' }] } } });
      subscriptions.splice(at, 1);
      return reply({ data: { webhookSubscriptionDelete: { deletedWebhookSubscriptionId: variables.id, userErrors: [] } } });
    }
    if (query.includes('webhookSubscriptions')) {
      const edges = subscriptions
        .filter((s) => s.shop === shop.domain)
        .map((s) => ({ node: { id: s.id, topic: s.topic, endpoint: { __typename: 'WebhookHttpEndpoint', callbackUrl: s.callbackUrl } } }));
      return reply({ data: { webhookSubscriptions: { edges } } });
    }
    if (query.includes('shop')) return reply({ data: { shop: { currencyCode: shop.currency } } });
    return json(200, { errors: [{ message: 'Field does not exist' }] });
  });

  /** One delivery exactly as the platform sends it: base64 HMAC-SHA256 of the raw body with the app's secret. */
  async function send(url: string, shopDomain: string, topic: string, payload: unknown, options: SendOptions = {}): Promise<Response> {
    const shop = shops.find((s) => s.domain === shopDomain);
    const body = options.body ?? JSON.stringify(payload);
    const hmac = createHmac('sha256', options.secret ?? shop?.clientSecret ?? 'unknown').update(options.signedBody ?? body).digest('base64');
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-platform-a-hmac-sha256': hmac,
      'x-platform-a-topic': topic,
      'x-platform-a-shop-domain': shopDomain,
      'x-platform-a-api-version': '2025-01',
      'x-platform-a-webhook-id': crypto.randomUUID(),
      'x-platform-a-event-id': options.eventId ?? `evt-${eventCounter++}`,
      'x-platform-a-triggered-at': options.triggeredAt ?? new Date().toISOString(),
    };
    return postDelivery(url, headers, options.headers, body);
  }

  return {
    ...fake,
    subscriptions,
    outage,
    bucket,
    stats,
    hooks,
    send,
    /** The shop's product list (REST-shaped), which tests change as merchants would. */
    productsOf(shopDomain: string): any[] {
      const shop = shops.find((s) => s.domain === shopDomain)!;
      return (shop.products ??= []);
    },
    /** The shop's collections or pages, which tests change as merchants would. */
    entriesOf(shopDomain: string, connection: EntryConnection): any[] {
      const shop = shops.find((s) => s.domain === shopDomain)!;
      return (shop[connection] ??= []);
    },
    /** Deliver an event to every subscription of the shop for this topic (as the platform fans out). */
    async deliver(shopDomain: string, topic: string, payload: unknown, options: SendOptions = {}): Promise<Response[]> {
      const targets = subscriptions.filter((s) => s.shop === shopDomain && restTopic(s.topic) === topic);
      const eventId = options.eventId ?? `evt-${eventCounter++}`;
      return Promise.all(targets.map((s) => send(s.callbackUrl, shopDomain, topic, payload, { ...options, eventId })));
    },
  };
}

export type FakePlatformA = ReturnType<typeof startFakePlatformA>;
