import { createHash } from 'node:crypto';
import { json, startFake, type Outage } from './http.ts';
import { platformBProduct } from './payloads.ts';

export interface Hook {
  id: number;
  scope: string;
  destination: string;
  headers: Record<string, string>;
  is_active: boolean;
}

/**
 * Platform B for one store: the hooks API (`/v3/hooks`, one hook per scope + destination), the
 * catalog API (products, categories, paginated, under one request quota), content pages
 * (`/v3/content/pages`), store info (`/v2/store`), all behind `X-Auth-Token`;
 * and thin deliveries that echo the hook's custom headers, with the payload `hash` for dedupe.
 */
export function startFakePlatformB(store: { storeHash: string; accessToken: string; currency: string }, others: { storeHash: string; accessToken: string }[] = []) {
  const hooks: Hook[] = [];
  /** Hooks registered by svc for the other stores (enough to tell them apart in tamper tests). */
  const otherHooks = new Map<string, Hook[]>(others.map((o) => [o.storeHash, []]));
  const products = new Map<number, ReturnType<typeof platformBProduct>>();
  /** The catalog's categories and the store's content pages, by id (payloads.ts). */
  const categories = new Map<number, any>();
  const pages = new Map<number, any>();
  const entryLists = { '/v3/catalog/categories': { kind: 'category' as const, items: categories }, '/v3/content/pages': { kind: 'page' as const, items: pages } };
  /** `catalog` fails product fetches only; `api` fails every call. */
  const outage = { api: { status: null } as Outage, catalog: { status: null } as Outage };
  const calls = { productFetches: 0, productPages: [] as number[], categoryPages: [] as number[], contentPages: [] as number[], overQuota: 0 };
  /** The API quota: `quota` requests per `windowMs` (the platform's real window is 30 s); every call spends one. */
  const rateLimit = { quota: 450, windowMs: 30_000, used: 0, windowStart: performance.now(), sendHeaders: true };
  /** Test hook called before a products page is answered (its body already built); a Response replaces the answer. */
  type PageHook<A extends unknown[]> = ((...page: A) => Promise<Response | void> | Response | void) | null;
  const pageHooks: { beforeProductsPage: PageHook<[number]>; beforeEntriesPage: PageHook<['category' | 'page', number]> } = { beforeProductsPage: null, beforeEntriesPage: null };

  /** Spend one request of the window: the quota headers to send, or null when none is left (429). */
  function spend(): { headers: Record<string, string>; ok: boolean } {
    const now = performance.now();
    if (now - rateLimit.windowStart >= rateLimit.windowMs) {
      rateLimit.windowStart = now;
      rateLimit.used = 0;
    }
    const ok = rateLimit.used < rateLimit.quota;
    if (ok) rateLimit.used++;
    const resetMs = Math.ceil(rateLimit.windowMs - (now - rateLimit.windowStart));
    return {
      ok,
      // A proxy or an older API version may answer without them (tests switch them off).
      headers: !rateLimit.sendHeaders ? {} : {
        'x-rate-limit-requests-left': String(rateLimit.quota - rateLimit.used),
        'x-rate-limit-requests-quota': String(rateLimit.quota),
        'x-rate-limit-time-reset-ms': String(resetMs),
        'x-rate-limit-time-window-ms': String(rateLimit.windowMs),
      },
    };
  }

  /** One page of a list in the v3 envelope (`data`, `meta.pagination`), in id order. */
  function listBody(url: URL, all: Iterable<any>, defaultLimit: number) {
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const limit = Math.min(Math.max(1, Number(url.searchParams.get('limit') ?? defaultLimit)), 250);
    const sorted = [...all].sort((a, b) => a.id - b.id);
    const data = sorted.slice((page - 1) * limit, page * limit);
    const totalPages = Math.max(1, Math.ceil(sorted.length / limit));
    return { page, body: { data, meta: { pagination: { total: sorted.length, count: data.length, per_page: limit, current_page: page, total_pages: totalPages, links: {} } } } };
  }

  async function productsPage(url: URL, quota: Record<string, string>): Promise<Response> {
    const { page, body } = listBody(url, products.values(), 50);
    const replaced = await pageHooks.beforeProductsPage?.(page);
    if (replaced) return replaced;
    calls.productPages.push(page);
    return Response.json(body, { headers: quota });
  }

  async function entriesPage(url: URL, kind: 'category' | 'page', items: Map<number, any>, quota: Record<string, string>): Promise<Response> {
    const { page, body } = listBody(url, items.values(), 50);
    const replaced = await pageHooks.beforeEntriesPage?.(kind, page);
    if (replaced) return replaced;
    (kind === 'category' ? calls.categoryPages : calls.contentPages).push(page);
    return Response.json(body, { headers: quota });
  }
  let nextId = 1;
  const base = `/stores/${store.storeHash}`;

  const fake = startFake(async (request, url) => {
    const other = others.find((o) => url.pathname.startsWith(`/stores/${o.storeHash}/`));
    if (other) return otherStore(request, url, other);
    if (!url.pathname.startsWith(base)) return json(404, { status: 404, title: 'Store not found' });
    if (request.headers.get('x-auth-token') !== store.accessToken) return json(401, { status: 401, title: 'Unauthorized' });
    if (outage.api.status) return json(outage.api.status, { status: outage.api.status, title: 'Service unavailable' });
    const path = url.pathname.slice(base.length);
    const list = path === '/v3/catalog/products' ? null : entryLists[path as keyof typeof entryLists];
    if ((path === '/v3/catalog/products' || list) && request.method === 'GET') {
      const quota = spend();
      if (!quota.ok) {
        calls.overQuota++;
        return Response.json({ status: 429, title: 'Too many requests' }, { status: 429, headers: quota.headers });
      }
      return list ? entriesPage(url, list.kind, list.items, quota.headers) : productsPage(url, quota.headers);
    }
    const entryMatch = /^(\/v3\/catalog\/categories|\/v3\/content\/pages)\/(\d+)$/.exec(path);
    if (entryMatch && request.method === 'GET') {
      const entry = entryLists[entryMatch[1] as keyof typeof entryLists].items.get(Number(entryMatch[2]));
      return entry ? json(200, { data: entry, meta: {} }) : json(404, { status: 404, title: 'The requested resource was not found.' });
    }
    if (path === '/v3/hooks' && request.method === 'GET') return json(200, { data: hooks, meta: {} });
    if (path === '/v3/hooks' && request.method === 'POST') {
      const body = (await request.json()) as Omit<Hook, 'id'>;
      if (hooks.some((h) => h.scope === body.scope && h.destination === body.destination)) {
        return json(422, { status: 422, title: 'Hook already exists for this scope and destination' });
      }
      const hook = { id: nextId++, scope: body.scope, destination: body.destination, headers: body.headers ?? {}, is_active: body.is_active ?? true };
      hooks.push(hook);
      return json(200, { data: { ...hook, client_id: 'svc', store_hash: store.storeHash, created_at: Date.now() / 1000 }, meta: {} });
    }
    const hookMatch = /^\/v3\/hooks\/(\d+)$/.exec(path);
    if (hookMatch && request.method === 'DELETE') {
      const at = hooks.findIndex((h) => h.id === Number(hookMatch[1]));
      if (at === -1) return json(404, { status: 404, title: 'Hook not found' });
      const [hook] = hooks.splice(at, 1);
      return json(200, { data: hook, meta: {} });
    }
    if (hookMatch && request.method === 'PUT') {
      const hook = hooks.find((h) => h.id === Number(hookMatch[1]));
      if (!hook) return json(404, { status: 404, title: 'Hook not found' });
      Object.assign(hook, (await request.json()) as Partial<Hook>);
      return json(200, { data: hook, meta: {} });
    }
    const productMatch = /^\/v3\/catalog\/products\/(\d+)$/.exec(path);
    if (productMatch && request.method === 'GET') {
      calls.productFetches++;
      if (outage.catalog.status) return json(outage.catalog.status, { status: outage.catalog.status, title: 'Internal error' });
      const product = products.get(Number(productMatch[1]));
      return product ? json(200, { data: product, meta: {} }) : json(404, { status: 404, title: 'The requested product was not found.' });
    }
    if (path === '/v2/store' && request.method === 'GET') return json(200, { id: store.storeHash, domain: 'shop.example', currency: store.currency });
    return json(404, { status: 404, title: 'Not found' });
  });

  /** Another store: only the hooks API, enough for svc to register its hooks there. */
  async function otherStore(request: Request, url: URL, other: { storeHash: string; accessToken: string }): Promise<Response> {
    if (request.headers.get('x-auth-token') !== other.accessToken) return json(401, { status: 401, title: 'Unauthorized' });
    const list = otherHooks.get(other.storeHash)!;
    if (url.pathname.endsWith('/v3/hooks') && request.method === 'GET') return json(200, { data: list, meta: {} });
    if (/\/v3\/(catalog\/products|catalog\/categories|content\/pages)$/.test(url.pathname)) return json(200, { data: [], meta: { pagination: { total: 0, count: 0, per_page: 50, current_page: 1, total_pages: 1 } } });
    if (url.pathname.endsWith('/v3/hooks') && request.method === 'POST') {
      const hook = { id: nextId++, ...((await request.json()) as Omit<Hook, 'id'>) };
      list.push(hook);
      return json(200, { data: hook, meta: {} });
    }
    return json(404, { status: 404, title: 'Not found' });
  }

  /** The payload of one event: only the id, plus the dedupe `hash` (SHA-1 of the event data). */
  function event(scope: string, id: number, createdAt = Math.floor(Date.now() / 1000)) {
    const data = { type: scope.split('/')[1], id };
    const hash = createHash('sha1').update(JSON.stringify({ scope, data, createdAt })).digest('hex');
    return { scope, store_id: '1001234', data, hash, created_at: createdAt, producer: `stores/${store.storeHash}` };
  }

  /** POST a payload to one hook's destination with its custom headers (overridable for tamper tests). */
  function send(destination: string, payload: unknown, headers: Record<string, string | null> = {}): Promise<Response> {
    const hook = hooks.find((h) => h.destination === destination);
    const all: Record<string, string> = { 'content-type': 'application/json', ...hook?.headers };
    for (const [name, value] of Object.entries(headers)) {
      for (const key of Object.keys(all)) if (key.toLowerCase() === name.toLowerCase()) delete all[key];
      if (value !== null) all[name] = value;
    }
    return fetch(destination, { method: 'POST', headers: all, body: JSON.stringify(payload) });
  }

  return {
    ...fake,
    hooks,
    otherHooks,
    products,
    categories,
    pages,
    outage,
    calls,
    rateLimit,
    pageHooks,
    event,
    send,
    /** Deliver an event to every active hook registered for its scope; returns the payload sent. */
    async deliver(scope: string, id: number): Promise<{ payload: ReturnType<typeof event>; responses: Response[] }> {
      const payload = event(scope, id);
      const responses = await Promise.all(hooks.filter((h) => h.is_active && h.scope === scope).map((h) => send(h.destination, payload)));
      return { payload, responses };
    },
  };
}

export type FakePlatformB = ReturnType<typeof startFakePlatformB>;
