import { createHmac } from 'node:crypto';
import { json, postDelivery, startFake, type Outage } from './http.ts';

export interface CHook {
  id: number;
  name: string;
  topic: string;
  delivery_url: string;
  secret: string;
  status: 'active' | 'paused' | 'disabled';
  pingStatus: number | null;
}

/**
 * Platform C's site: the REST webhooks API (`/wp-json/wc/v3/webhooks`, Basic consumer key/secret,
 * `secret` never returned, deletes only with `force=true`), the products API (`/products/{id}`, which still answers for a product in
 * the trash, with `status: trash`, and its paginated
 * `/products/{id}/variations`), product categories, the site's public pages (`/wp-json/wp/v2/pages`,
 * no credentials), a rate limit in front of every list, the currency setting, the unsigned form-encoded creation ping sent
 * before the create call returns, and signed deliveries with the `X-Platform-C-Webhook-*` headers.
 */
export function startFakePlatformC(keys: { consumerKey: string; consumerSecret: string; currency: string }) {
  const hooks: CHook[] = [];
  const products = new Map<number, Record<string, unknown>>();
  const variations = new Map<number, Record<string, unknown>[]>();
  /** The shop's product categories and the site's published pages (payloads.ts), by id. */
  const categories = new Map<number, any>();
  const pages = new Map<number, any>();
  const calls = { requests: 0, productFetches: 0, variationPages: 0, productPages: [] as number[], categoryPages: [] as number[], sitePages: [] as number[] };
  /** Answers 429 (with Retry-After) to the next this-many list calls (products, categories, pages), as a host's rate limit in front of a site does. */
  const throttle = { next: 0, retryAfterSeconds: 1, ignoredRetryAfter: 0, refusedAt: 0 };
  type PageHook<A extends unknown[]> = ((...page: A) => Promise<Response | void> | Response | void) | null;
  /** `beforeRequest` sees every request first (a site misbehaving in any way a test needs); a Response replaces the answer. */
  const pageHooks: { beforeProductsPage: PageHook<[number]>; beforeEntriesPage: PageHook<['category' | 'page', number]>; beforeProductFetch: PageHook<[number]>; beforeRequest: PageHook<[Request, URL]> } = {
    beforeProductsPage: null,
    beforeEntriesPage: null,
    beforeProductFetch: null,
    beforeRequest: null,
  };
  const outage: Outage = { status: null };
  let nextId = 1;
  const authorized = `Basic ${btoa(`${keys.consumerKey}:${keys.consumerSecret}`)}`;
  const publicHook = ({ secret: _secret, pingStatus: _ping, ...hook }: CHook) => hook;

  /** The host's rate limit in front of every list: a 429 with Retry-After while the test asks for one (null: go on). */
  function rateLimited(): Response | null {
    if (throttle.refusedAt && performance.now() - throttle.refusedAt < throttle.retryAfterSeconds * 1000) throttle.ignoredRetryAfter++;
    if (throttle.next <= 0) return null;
    throttle.next--;
    throttle.refusedAt = performance.now();
    return new Response(JSON.stringify({ code: 'too_many_requests', message: 'Too Many Requests' }), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': String(throttle.retryAfterSeconds) } });
  }

  /** One page of a list in id order with the WordPress paging headers (`X-WP-Total`, `X-WP-TotalPages`). */
  function listPage(url: URL, all: Iterable<any>): { page: number; answer: () => Response } {
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 10), 100);
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const sorted = [...all].sort((a, b) => Number(a.id) - Number(b.id));
    const totalPages = Math.max(1, Math.ceil(sorted.length / perPage));
    const fields = url.searchParams.get('_fields')?.split(',');
    const body = sorted.slice((page - 1) * perPage, page * perPage).map((item) => (fields ? Object.fromEntries(fields.map((f) => [f, item[f]])) : item));
    return { page, answer: () => Response.json(body, { headers: { 'x-wp-total': String(sorted.length), 'x-wp-totalpages': String(totalPages) } }) };
  }

  async function entriesPage(url: URL, kind: 'category' | 'page', items: Map<number, any>): Promise<Response> {
    const { page, answer } = listPage(url, items.values());
    const replaced = await pageHooks.beforeEntriesPage?.(kind, page);
    if (replaced) return replaced;
    (kind === 'category' ? calls.categoryPages : calls.sitePages).push(page);
    return answer();
  }

  const fake = startFake(async (request, url) => {
    calls.requests++;
    const replaced = await pageHooks.beforeRequest?.(request, url);
    if (replaced) return replaced;
    // The site's own API: public content needs no sign-in, and a Basic header that is not a WordPress
    // user's application password is refused (the shop's consumer keys are not one).
    const sitePage = /^\/wp-json\/wp\/v2\/pages(?:\/(\d+))?$/.exec(url.pathname);
    if (sitePage && request.method === 'GET') {
      if (request.headers.get('authorization')) return json(401, { code: 'invalid_username', message: 'Unknown username. Check again or try your email address.', data: { status: 401 } });
      if (outage.status) return json(outage.status, { code: 'internal_server_error', message: 'There has been a critical error on this website.' });
      if (sitePage[1]) return pages.has(Number(sitePage[1])) ? json(200, pages.get(Number(sitePage[1]))) : json(404, { code: 'rest_post_invalid_id', message: 'Invalid post ID.', data: { status: 404 } });
      return rateLimited() ?? entriesPage(url, 'page', pages);
    }
    const path = url.pathname.replace(/^\/wp-json\/wc\/v3/, '');
    if (request.headers.get('authorization') !== authorized) return json(401, { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.', data: { status: 401 } });
    if (outage.status) return json(outage.status, { code: 'internal_server_error', message: 'There has been a critical error on this website.' });
    if (path === '/webhooks' && request.method === 'GET') return json(200, hooks.map(publicHook));
    if (path === '/webhooks' && request.method === 'POST') {
      const body = (await request.json()) as Partial<CHook>;
      const hook: CHook = { id: nextId++, name: body.name ?? '', topic: body.topic!, delivery_url: body.delivery_url!, secret: body.secret!, status: body.status ?? 'active', pingStatus: null };
      hooks.push(hook);
      // Like the real platform: ping the delivery URL after saving, before answering, ignoring the result.
      const ping = await fetch(hook.delivery_url, { method: 'POST', body: `webhook_id=${hook.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }).catch(() => null);
      hook.pingStatus = ping?.status ?? null;
      return json(201, publicHook(hook));
    }
    const match = /^\/webhooks\/(\d+)$/.exec(path);
    if (match && request.method === 'DELETE') {
      // Hooks have no trash: the API refuses a delete without force=true, as the platform's does.
      if (url.searchParams.get('force') !== 'true') return json(501, { code: 'woocommerce_rest_trash_not_supported', message: 'Webhooks do not support trashing.' });
      const at = hooks.findIndex((h) => h.id === Number(match[1]));
      if (at === -1) return json(404, { code: 'woocommerce_rest_webhook_invalid_id', message: 'Invalid ID.' });
      const [hook] = hooks.splice(at, 1);
      return json(200, publicHook(hook!));
    }
    if (match && request.method === 'PUT') {
      const hook = hooks.find((h) => h.id === Number(match[1]));
      if (!hook) return json(404, { code: 'woocommerce_rest_webhook_invalid_id', message: 'Invalid ID.' });
      Object.assign(hook, (await request.json()) as Partial<CHook>);
      return json(200, publicHook(hook));
    }
    if (path === '/products' && request.method === 'GET') {
      const refused = rateLimited();
      if (refused) return refused;
      // The list's default status (`any`) leaves out products in the trash.
      const { page, answer } = listPage(url, [...products.values()].filter((p) => p.status !== 'trash'));
      const replaced = await pageHooks.beforeProductsPage?.(page);
      if (replaced) return replaced;
      calls.productPages.push(page);
      return answer();
    }
    if (path === '/products/categories' && request.method === 'GET') return rateLimited() ?? entriesPage(url, 'category', categories);
    const categoryMatch = /^\/products\/categories\/(\d+)$/.exec(path);
    if (categoryMatch && request.method === 'GET') {
      const category = categories.get(Number(categoryMatch[1]));
      return category ? json(200, category) : json(404, { code: 'woocommerce_rest_term_invalid', message: 'Resource does not exist.', data: { status: 404 } });
    }
    const productMatch = /^\/products\/(\d+)(\/variations)?$/.exec(path);
    if (productMatch && request.method === 'GET') {
      const replaced = productMatch[2] ? undefined : await pageHooks.beforeProductFetch?.(Number(productMatch[1]));
      if (replaced) return replaced;
      const product = products.get(Number(productMatch[1]));
      if (!product) return json(404, { code: 'woocommerce_rest_product_invalid_id', message: 'Invalid ID.', data: { status: 404 } });
      if (!productMatch[2]) {
        calls.productFetches++;
        return json(200, product);
      }
      calls.variationPages++;
      const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 10), 100);
      const page = Number(url.searchParams.get('page') ?? 1);
      const all = variations.get(Number(productMatch[1])) ?? [];
      return json(200, all.slice((page - 1) * perPage, page * perPage));
    }
    if (path === '/settings/general/woocommerce_currency') return json(200, { id: 'woocommerce_currency', label: 'Currency', value: keys.currency });
    return json(404, { code: 'rest_no_route', message: 'No route was found matching the URL and request method.' });
  });
  const siteUrl = fake.url;

  /** One signed delivery to a URL; `options` tamper with it. */
  function send(url: string, topic: string, payload: unknown, secret: string, options: { headers?: Record<string, string | null>; body?: string; signedBody?: string } = {}): Promise<Response> {
    const body = options.body ?? JSON.stringify(payload);
    const [resource, event] = topic.split('.');
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'PlatformC/9.0 Hookshot (WordPress/6.7)',
      'x-platform-c-webhook-source': `${siteUrl}/`,
      'x-platform-c-webhook-topic': topic,
      'x-platform-c-webhook-resource': resource!,
      'x-platform-c-webhook-event': event!,
      'x-platform-c-webhook-signature': createHmac('sha256', secret).update(options.signedBody ?? body).digest('base64'),
      'x-platform-c-webhook-id': '1',
      'x-platform-c-webhook-delivery-id': crypto.randomUUID(),
    };
    return postDelivery(url, headers, options.headers, body);
  }

  return {
    ...fake,
    siteUrl,
    hooks,
    products,
    variations,
    categories,
    pages,
    calls,
    throttle,
    pageHooks,
    outage,
    send,
    /**
     * The merchant moves a product to the trash, as `product.deleted` reports: the API still answers
     * for it, with `status: trash`, modified now (UTC, as `date_modified_gmt` is written).
     */
    trash(id: number, at = new Date()): void {
      const product = products.get(id)!;
      products.set(id, { ...product, status: 'trash', date_modified_gmt: at.toISOString().slice(0, 19) });
    },
    /** Deliver to every active hook on this topic, signed with that hook's secret. */
    deliver(topic: string, payload: unknown): Promise<Response[]> {
      return Promise.all(hooks.filter((h) => h.status === 'active' && h.topic === topic).map((h) => send(h.delivery_url, topic, payload, h.secret)));
    },
  };
}

export type FakePlatformC = ReturnType<typeof startFakePlatformC>;
