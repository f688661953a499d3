// The seeded fuzzer behind test/fuzz.test.ts (a short pass) and bench/fuzz.ts (a long one): it walks
// every route of the app's route table against a spawned `svc serve`, mutating paths, headers, bodies
// and HTTP framing, and reports every 5xx, every /healthz that did not answer, and the server's RSS.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeTestApp, tempDir } from './app.ts';
import { spawnServer, type SpawnedServer } from './server.ts';
import { enrich, realisticProduct, seedStore, syncProduct } from './signals.ts';

/** mulberry32: small, fast and the same on every machine, so a seed reproduces a run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (random: Random, p: number) => random() < p;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

interface Route {
  method: string;
  path: string;
  fields: string[];
}

interface Credentials {
  admin: string;
  agent: string;
  widget: string;
  leadToken: string;
  appSecret: string;
  ids: Record<string, string[]>;
  /** Per platform: a store id and the secret its webhooks are signed with. */
  hooks: { b: { storeId: string; secret: string }; c: { siteUrl: string; secret: string } };
}

/** A server seeded with one store per platform, a product, a FAQ, keys and a lead, and the routes it serves. */
export interface FuzzTarget {
  server: SpawnedServer;
  routes: Route[];
  credentials: Credentials;
  /** The label of its rate-limit settings, in reports. */
  limits: 'raised' | 'default';
  stop(): Promise<void>;
}

const ENCRYPTION_KEY = 'a'.repeat(64);
const APP_SECRET = 'fuzz-app-secret';
/** Every tier raised to its maximum; X-Forwarded-For (IPv4 and IPv6) then decides the anonymous bucket. */
const RAISED_LIMITS: Record<string, string> = {
  ...Object.fromEntries(['SVC_RATE_ANONYMOUS', 'SVC_RATE_AUTHED'].map((name) => [name, '1000000'])),
  ...Object.fromEntries(['SVC_RATE_AGENT', 'SVC_RATE_ANONYMOUS_GLOBAL'].map((name) => [name, '10000000'])),
  SVC_TRUST_PROXY: '1',
};
/** Platform calls the fuzzed routes start (hook registration, sync) go to a closed local port, never out. */
const DEAD_END = 'http://127.0.0.1:9';
const NO_OUTBOUND = { SVC_PLATFORM_A_API_BASE: DEAD_END, SVC_PLATFORM_B_API_BASE: DEAD_END, SVC_SYNC_INTERVAL_HOURS: '0' };
/** Fields the fuzzer fills for routes whose body is validated in code rather than by a schema. */
const CODE_VALIDATED_FIELDS: Record<string, string[]> = {
  '/api/v1/probe/telemetry': ['hostname', 'signals', 'url', 'scannedAt', 'platform', 'pageType', 'svc', 'signalPresence', 'quality', 'country', 'vertical'],
  '/api/v1/probe/scan-bulk': ['scans'],
  '/api/v1/admin/stores/:id/settings': ['itemCondition', 'returnPolicy', 'shipping'],
  '/': ['email'],
};

/**
 * Seed a data directory through the app's own stores, read its route table, then serve it from a
 * spawned process. `limits: 'raised'` lifts every rate limit so requests reach the handlers;
 * `'default'` keeps the shipped limits (the fuzzer then mostly meets 429s, which must hold too).
 */
export async function startFuzzTarget(limits: 'raised' | 'default'): Promise<FuzzTarget> {
  const tmp = tempDir('svc-fuzz-');
  const dataDir = path.join(tmp.dir, 'data');
  const env = { SVC_ENCRYPTION_KEY: ENCRYPTION_KEY, SVC_PLATFORM_A_APP_SECRET: APP_SECRET, ...NO_OUTBOUND, ...(limits === 'raised' ? RAISED_LIMITS : {}) };
  const t = await makeTestApp({ dataDir, env });
  let credentials: Credentials;
  let routes: Route[];
  try {
    const storeA = await seedStore(t, 'platform-a', 'fuzz.myplatform-a.com');
    const storeB = await seedStore(t, 'platform-b', 'fuzzhash');
    const siteUrl = DEAD_END;
    const storeC = await seedStore(t, 'platform-c', siteUrl);
    const product = realisticProduct('platform-a', 1, 'fuzz.myplatform-a.com');
    await syncProduct(t, storeA, product);
    const productB = realisticProduct('platform-b', 2, 'fuzzhash', 'multi');
    await syncProduct(t, storeB, productB);
    const productC = realisticProduct('platform-c', 3, siteUrl, 'multi');
    await syncProduct(t, storeC, productC);
    // Signals are served for enriched products only.
    for (const [storeId, { productId }] of [[storeA, product], [storeB, productB], [storeC, productC]] as const) await enrich(t, storeId, productId);
    const admin = await t.keys.create({ scopes: ['admin'], name: 'fuzz admin' });
    const widget = (await t.keys.create({ scopes: ['products:read'], storeId: storeA, name: 'fuzz widget', allowedDomains: ['fuzz.example.com'] })).key;
    const { apiToken } = await t.leads.create('fuzz@example.com', true);
    // The ids the fuzzer may revoke, rotate or delete belong to a lead and a key of their own, so the
    // credentials it authenticates with keep working through the run.
    const { lead } = await t.leads.create('fuzz-victim@example.com', true);
    const victimKey = (await t.keys.create({ scopes: ['admin'], name: 'fuzz victim' })).record.id;
    const faq = await t.request('/api/v1/admin/faqs', { method: 'POST', headers: { authorization: `Bearer ${admin.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ storeId: storeA, entityType: 'product', entityRef: product.productId, question: 'Q?', answer: 'A.' }) });
    const faqId = ((await faq.json()) as { id: string }).id;
    const secretOf = async (id: string) => t.webhooks.stores.webhookSecretOf((await t.webhooks.stores.get(id))!)!;
    credentials = {
      admin: admin.key,
      agent: await t.keyWith('probe:scan'),
      widget,
      leadToken: apiToken,
      appSecret: APP_SECRET,
      ids: {
        id: [storeA, faqId, lead.id, victimKey],
        storeId: [storeA, storeB, storeC],
        productId: [product.productId, productB.productId, productC.productId, '1'],
        file: [product, productB, productC].flatMap(({ productId }) => ['jsonld', 'llm', 'md', 'meta'].map((format) => `${productId}.${format}`)).concat('sitemap.xml', 'sitemap-1.xml', 'llms.txt', '1.jsonld', 'x.txt'),
        name: ['x.js', 'app.js', 'app.css'],
        '*': ['stores', 'keys', 'scans', ''],
      },
      hooks: { b: { storeId: storeB, secret: await secretOf(storeB) }, c: { siteUrl, secret: await secretOf(storeC) } },
    };
    routes = (t.app.routes as { method: string; path: string; hooks?: { body?: { properties?: Record<string, unknown> } } }[]).map((route) => ({
      method: route.method,
      path: route.path,
      fields: CODE_VALIDATED_FIELDS[route.path] ?? Object.keys(route.hooks?.body?.properties ?? {}),
    }));
  } finally {
    await t.close();
  }
  const server = await spawnServer({ dataDir, env });
  return {
    server,
    routes,
    credentials,
    limits,
    stop: async () => {
      await server.stop('SIGKILL');
      tmp.remove();
    },
  };
}

/** Resident set size of a process in bytes, from /proc/<pid>/status. */
export function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

// ---- generation ---------------------------------------------------------------------------------

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString', 'valueOf'];
const ODD_STRINGS = ['', ' ', 'a'.repeat(300), '\u0000', '\ud800', '😀', '<script>alert(1)</script>', '%zz', '../../etc/passwd', 'x'.repeat(70_000), '1e309', '-0', 'null'];
const ODD_VALUES: unknown[] = [null, true, 0, -1, 1e308, 1.5, [], {}, [null], { value: 1 }, ...ODD_STRINGS.slice(0, 8)];
const HOSTILE_SEGMENTS = ['%E0%A4%A', '%zz', '%', '%2e%2e', '..', '%00', '__proto__', 'constructor', '%2F', 'x'.repeat(3000), '😀', '%F0%9F%98%80', ' ', '%20'];

export interface FuzzRequest {
  /** Its position in the run: with the seed it regenerates this exact request. */
  index: number;
  /** The route-table entry it was made from (`METHOD /path/:param`). */
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer> | null;
  /** How the request is put on the wire: `fetch` or a raw socket with a framing fault. */
  framing: 'fetch' | 'raw' | 'chunked' | 'short-length' | 'long-length' | 'truncated' | 'length-and-chunked' | 'trickled';
  target: number;
  /** A prefix put before the route's path that names no route (`/z`, `/zz`, `//`): whatever the Host, it must never reach one. */
  strayPrefix: string | null;
}

function randomValue(random: Random, depth: number): unknown {
  if (depth > 3 || chance(random, 0.4)) return pick(random, ODD_VALUES);
  if (chance(random, 0.5)) return Array.from({ length: int(random, 0, 4) }, () => randomValue(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = int(random, 0, 4); i > 0; i--) object[chance(random, 0.2) ? pick(random, PROTO_KEYS) : `k${int(random, 0, 50)}`] = randomValue(random, depth + 1);
  return object;
}

/** A plausible body for the route (its own fields, a telemetry scan), valid often enough to reach deep code. */
function plausibleBody(random: Random, route: Route, credentials: Credentials): Record<string, unknown> {
  const scan = () => ({
    hostname: pick(random, ['fuzz.example.com', 'fuzz.myplatform-a.com', 'FUZZ.example.com.', 'xn--bcher-kva.example', '127.0.0.1', '[::1]']),
    url: pick(random, ['https://fuzz.example.com/products/1', 'javascript:alert(1)', 'https://fuzz.example.com/' + 'p/'.repeat(500)]),
    scannedAt: pick(random, [new Date().toISOString(), '2999-01-01T00:00:00Z', '1970-01-01T00:00:00Z', 'yesterday', 0]),
    signals: { title: { value: pick(random, ODD_STRINGS.slice(0, 8)), length: 4 }, jsonLd: [{ '@type': 'Product', name: 'x' }] },
    quality: { grade: pick(random, ['A', 'F', 'Z', 1]), percentage: pick(random, [90, -5, 'x', 1e9]) },
  });
  if (route.path === '/api/v1/probe/telemetry') return scan();
  if (route.path === '/api/v1/probe/scan-bulk') return { scans: Array.from({ length: int(random, 0, chance(random, 0.1) ? 300 : 5) }, scan) };
  const body: Record<string, unknown> = {};
  for (const field of route.fields) {
    if (chance(random, 0.3)) continue;
    body[field] = chance(random, 0.6) ? pick(random, [...ODD_STRINGS.slice(0, 8), 'fuzz@example.com', credentials.ids.storeId![0], 'product', 'admin']) : randomValue(random, 1);
  }
  return body;
}

/** A JSON body mutated in structure: deep nesting, huge or many keys, prototype names, wrong types, invalid UTF-8, truncation. */
function mutateBody(random: Random, base: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  const encode = (text: string) => new TextEncoder().encode(text);
  switch (int(random, 0, 19)) {
    case 0:
      return encode('['.repeat(int(random, 30, 200_000)));
    case 1: {
      const depth = int(random, 30, 5000);
      return encode('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
    }
    case 2:
      return encode(`{${Array.from({ length: int(random, 1000, 60_000) }, (_, i) => `"k${i}":${i}`).join(',')}}`);
    case 3:
      return encode(JSON.stringify({ ...base, ['k'.repeat(int(random, 1000, 600_000))]: 1 }));
    case 4:
      return encode(JSON.stringify({ ...base, extra: 'x'.repeat(int(random, 10_000, 900_000)) }));
    case 5: {
      const text = JSON.stringify(base);
      return encode(text.slice(0, int(random, 0, text.length)));
    }
    case 6: {
      const bytes = encode(JSON.stringify(base));
      const broken = new Uint8Array(bytes.length + 4);
      const at = int(random, 0, bytes.length);
      broken.set(bytes.subarray(0, at));
      broken.set(pick(random, [[0xff, 0xfe], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf0, 0x28, 0x8c, 0x28]]), at);
      broken.set(bytes.subarray(at), at + 4);
      return broken;
    }
    case 7:
      return encode(`{"${pick(random, PROTO_KEYS)}":${JSON.stringify(randomValue(random, 0))},${JSON.stringify(base).slice(1)}`);
    case 8:
      return encode(pick(random, ['', 'null', '[]', '"x"', '1', 'true', '{', '}', '{"a":1,}', '\ufeff{}', 'NaN', '{"a":1}{"b":2}']));
    case 9: {
      const object = { ...base };
      for (const key of Object.keys(object)) if (chance(random, 0.5)) object[key] = randomValue(random, 0);
      return encode(JSON.stringify(object));
    }
    default:
      return encode(JSON.stringify(base));
  }
}

/** The route's path with parameters given real ids or hostile segments, and the path itself bent. */
function mutatePath(random: Random, routePath: string, ids: Record<string, string[]>): string {
  // The query a route needs to do real work (a badge's domain, an FAQ's entity, a listing's filter).
  const query = routePath.endsWith('/badge')
    ? `?domain=${pick(random, ['fuzz.example.com', 'FUZZ.example.com.', 'unknown.example.com'])}&format=${pick(random, ['svg', 'json', 'png'])}`
    : routePath.includes('/public/faqs')
      ? `?type=${pick(random, ['product', 'page', 'x'])}&ref=${pick(random, ids.productId!)}`
      : `?hostname=fuzz.example.com&limit=${pick(random, ['5', '500', '0'])}`;
  let filled = routePath.replace(/:(\w+)|\*/g, (_, name: string | undefined) => (chance(random, 0.75) ? pick(random, ids[name ?? '*'] ?? ['x']) : pick(random, HOSTILE_SEGMENTS)));
  switch (int(random, 0, 19)) {
    case 0:
      filled = filled.endsWith('/') ? filled.slice(0, -1) : `${filled}/`;
      break;
    case 1:
      filled = filled.replace(/\//g, () => (chance(random, 0.3) ? '//' : '/'));
      break;
    case 2:
      filled = filled.toUpperCase();
      break;
    case 3:
      filled = filled.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`);
      break;
    case 4:
      filled += pick(random, ['?', '?__proto__=1&constructor=x', '?limit=-1&cursor=%zz', '?limit=1e9', '?hostname=' + 'a'.repeat(5000), '?from=%&to=x', '?a[]=1&a[b]=2', '#frag']);
      break;
    case 5:
      filled += '/..' + pick(random, ['/healthz', '/%2e%2e/admin']);
      break;
  }
  return chance(random, 0.5) && !filled.includes('?') ? filled + query : filled;
}

/**
 * Path prefixes (issue 27): `/z`, `/zz` and `//` name no route, so a request under them must never
 * reach one, whatever the Host (with a 1–3 character Host the router once skipped them); `/./` and
 * `/a/..` resolve away, so the route is reached and its access rule must hold.
 */
const STRAY_PREFIXES = ['/z', '/zz', '//'];
const RESOLVED_PREFIXES = ['/.', '/a/..'];
/** Host headers (issue 27): short, with a port, uppercase, addresses, and ones that are no host at all (400 before routing). */
const HOSTS = ['x', 'ab', 'abc', 'abcd', 'x:1', 'X', 'LOCALHOST', '127.0.0.1', '[::1]', '[::1]:80', 'a/b', 'a b', '..', 'a:b:c', 'x%2fy', 'a:99999', '-a', 'evil@x'];

/** Stands for the target's own origin (the console's forms require it); filled in when sending. */
const SAME_ORIGIN = '<same-origin>';
const XFF = ['203.0.113.7', '2001:db8:1:2::1', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '::ffff:198.51.100.7', 'not-an-address', '1.2.3.4, 5.6.7.8', '[2001:db8::1]:443', '', 'x'.repeat(5000), '999.1.1.1'];

/** Headers: the auth of both probe modes (valid or bent), webhook signatures, timestamps, mismatched content types. */
function mutateHeaders(random: Random, route: Route, body: Uint8Array<ArrayBuffer> | null, credentials: Credentials): Record<string, string> {
  const headers: Record<string, string> = {};
  if (body && route.path === '/' && chance(random, 0.6)) headers['content-type'] = 'application/x-www-form-urlencoded';
  else if (body) headers['content-type'] = pick(random, ['application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '']);
  const raw = body ? new TextDecoder().decode(body) : '';
  const now = Date.now();
  const timestamp = chance(random, 0.8) ? now : pick(random, [now - 3_600_000, now + 3_600_000, Math.floor(now / 1000), Date.now(), -1, 'abc', '1e400', '']);
  const p = route.path;
  if (p.startsWith('/api/v1/probe/') || chance(random, 0.05)) {
    switch (int(random, 0, 5)) {
      case 0:
      case 4:
        headers['x-probe-token'] = chance(random, 0.7) ? credentials.leadToken : pick(random, ['', 'x', credentials.leadToken.slice(0, -1), 'a'.repeat(5000)]);
        break;
      case 1:
      case 2: {
        const key = chance(random, 0.9) ? credentials.agent : pick(random, ['', 'svc_x', credentials.admin]);
        headers['x-probe-key'] = key;
        headers['x-probe-timestamp'] = String(timestamp);
        headers['x-probe-signature'] = chance(random, 0.85) ? createHmac('sha256', key).update(`${timestamp}.${raw}`).digest('hex') : pick(random, ['', 'zz', '0'.repeat(64), 'A'.repeat(64)]);
        break;
      }
      case 3:
        headers['x-probe-token'] = credentials.leadToken;
        headers['x-probe-key'] = credentials.agent;
        break;
    }
  }
  if (p.includes('webhooks')) {
    const sign = (secret: string) => createHmac('sha256', secret).update(raw).digest('base64');
    if (p.includes('platform-a')) {
      Object.assign(headers, {
        'x-platform-a-topic': pick(random, ['products/update', 'products/delete', 'app/uninstalled', 'orders/create', '', '__proto__']),
        'x-platform-a-shop-domain': pick(random, ['fuzz.myplatform-a.com', 'unknown.myplatform-a.com', 'x', '']),
        'x-platform-a-hmac-sha256': chance(random, 0.6) ? sign(credentials.appSecret) : pick(random, ['', '=', 'A'.repeat(44)]),
        'x-platform-a-event-id': crypto.randomUUID(),
        'x-platform-a-triggered-at': pick(random, [new Date().toISOString(), 'x', '']),
      });
    } else if (p.includes('platform-b')) {
      Object.assign(headers, {
        'x-svc-store-id': chance(random, 0.7) ? credentials.hooks.b.storeId : pick(random, HOSTILE_SEGMENTS),
        'x-svc-webhook-secret': chance(random, 0.6) ? credentials.hooks.b.secret : pick(random, ['', 'x', credentials.hooks.b.secret.slice(1)]),
      });
    } else {
      Object.assign(headers, {
        'x-platform-c-webhook-signature': chance(random, 0.6) ? sign(credentials.hooks.c.secret) : pick(random, ['', 'x']),
        'x-platform-c-webhook-source': pick(random, [credentials.hooks.c.siteUrl, 'https://unknown.example.com', '']),
        'x-platform-c-webhook-topic': pick(random, ['product.updated', 'product.deleted', 'action.woocommerce_ping', '']),
        'x-platform-c-webhook-delivery-id': String(int(random, 1, 1e6)),
      });
    }
  }
  if (p.startsWith('/api/v1/admin') || p.startsWith('/api/v1/dashboard') || p.startsWith('/api/v1/console') || p.startsWith('/console') || chance(random, 0.1)) {
    headers.authorization = chance(random, 0.6) ? `Bearer ${credentials.admin}` : pick(random, [`Bearer ${credentials.widget}`, `Bearer ${credentials.admin}x`, 'Bearer ', 'Basic YTpi', 'bearer svc_' + 'a'.repeat(500), '']);
  }
  if (p.includes('/public/faqs') || chance(random, 0.05)) headers['x-api-key'] = pick(random, [credentials.widget, credentials.admin, 'nope', '']);
  if (chance(random, 0.3)) headers['x-forwarded-for'] = pick(random, XFF);
  if (p.includes('/public/') || p.startsWith('/console') || p === '/' || chance(random, 0.2)) headers.origin = pick(random, [SAME_ORIGIN, SAME_ORIGIN, 'https://fuzz.example.com', 'null', 'https://evil.example', '']);
  if (chance(random, 0.1)) headers.cookie = pick(random, ['svc_session=x', 'svc_session=' + 'a'.repeat(4000), '__proto__=1']);
  if (chance(random, 0.05)) headers['accept-encoding'] = 'gzip, br';
  if (chance(random, 0.08)) headers.host = pick(random, HOSTS);
  return headers;
}

/** The share of requests sent to the last target (the one with the shipped rate limits). */
const DEFAULT_LIMITS_SHARE = 0.2;
const FRAMINGS: FuzzRequest['framing'][] = ['chunked', 'short-length', 'long-length', 'truncated', 'length-and-chunked', 'trickled'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

/** Request `index` of the run seeded with `seed`: the same pair always gives the same request. */
export function generateRequest(seed: number, index: number, routes: Route[], credentials: Credentials, targets: number): FuzzRequest {
  const random = seededRandom((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const route = pick(random, routes);
  const method = chance(random, 0.9) ? route.method : pick(random, METHODS);
  const takesBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  const body = takesBody || chance(random, 0.05) ? mutateBody(random, plausibleBody(random, route, credentials)) : null;
  const headers = mutateHeaders(random, route, body, credentials);
  const framing = body && method !== 'GET' && method !== 'HEAD' && chance(random, 0.12) ? pick(random, FRAMINGS) : 'fetch';
  const prefix = chance(random, 0.08) ? pick(random, [...STRAY_PREFIXES, ...RESOLVED_PREFIXES]) : '';
  const path = prefix + mutatePath(random, route.path, credentials.ids);
  const strayPrefix = STRAY_PREFIXES.includes(prefix) ? prefix : null;
  // fetch sends `//x` as `/x`: a stray prefix goes on a raw socket, exactly as written.
  return { index, route: `${route.method} ${route.path}`, method, path, headers, body: method === 'GET' || method === 'HEAD' ? null : body, framing: strayPrefix !== null && framing === 'fetch' ? 'raw' : framing, target: targets > 1 && chance(random, DEFAULT_LIMITS_SHARE) ? targets - 1 : 0, strayPrefix };
}

// ---- sending ------------------------------------------------------------------------------------

export interface Outcome {
  /** 0: no answer before the fuzzer gave up (a framing fault that leaves the server waiting for bytes). */
  statuses: number[];
  ms: number;
}

const headersFor = (url: string, request: FuzzRequest) => (request.headers.origin === SAME_ORIGIN ? { ...request.headers, origin: url } : request.headers);

async function sendFetch(url: string, request: FuzzRequest): Promise<Outcome> {
  const started = performance.now();
  try {
    const response = await fetch(url + request.path, { method: request.method, headers: headersFor(url, request), body: request.body, signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    return { statuses: [response.status], ms: performance.now() - started };
  } catch {
    return { statuses: [0], ms: performance.now() - started };
  }
}

/** The request written on a raw socket with a framing fault; every status line that comes back is read. */
async function sendRaw(url: string, request: FuzzRequest): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  const body = request.body ?? new Uint8Array();
  const { host = `${hostname}:${port}`, ...headers } = headersFor(url, request);
  const head = (extra: string) =>
    `${request.method} ${request.path.replace(/[^\x21-\x7e]/gu, (char) => encodeURIComponent(char))} HTTP/1.1\r\nhost: ${host}\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value.replace(/[\r\n]/g, '')}\r\n`)
      .join('')}connection: close\r\n${extra}\r\n`;
  const concat = (...parts: (string | Uint8Array)[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
  const half = body.subarray(0, Math.floor(body.length / 2));
  let chunks: Buffer[];
  let endAfterWrite = true;
  switch (request.framing) {
    case 'chunked':
      chunks = [concat(head('transfer-encoding: chunked\r\n'), `${half.length.toString(16)}\r\n`, half, '\r\n', `${(body.length - half.length).toString(16)}\r\n`, body.subarray(half.length), '\r\n0\r\n\r\n')];
      break;
    case 'short-length':
      chunks = [concat(head(`content-length: ${body.length + 100}\r\n`), body)];
      endAfterWrite = false;
      break;
    case 'long-length':
      chunks = [concat(head(`content-length: ${half.length}\r\n`), body)];
      break;
    case 'truncated':
      chunks = [concat(head(`content-length: ${body.length}\r\n`), half)];
      break;
    case 'length-and-chunked':
      chunks = [concat(head(`content-length: ${body.length}\r\ntransfer-encoding: chunked\r\n`), `${body.length.toString(16)}\r\n`, body, '\r\n0\r\n\r\n')];
      break;
    default: {
      // 'raw' and 'trickled': the whole request, well framed, in a few writes ('trickled' waits between them).
      const whole = concat(head(`content-length: ${body.length}\r\n`), body);
      chunks = [];
      for (let at = 0; at < whole.length; at += Math.max(64, Math.ceil(whole.length / 8))) chunks.push(whole.subarray(at, at + Math.max(64, Math.ceil(whole.length / 8))));
    }
  }
  const started = performance.now();
  let received = '';
  const closed = Promise.withResolvers<void>();
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data: (_, data) => {
        received += data.toString('latin1');
      },
      close: () => closed.resolve(),
      error: () => closed.resolve(),
    },
  }).catch(() => null);
  if (!socket) return { statuses: [0], ms: 0 };
  for (const chunk of chunks) {
    socket.write(chunk);
    if (request.framing === 'trickled') await Bun.sleep(5);
  }
  if (endAfterWrite) socket.end();
  // A server waiting for bytes that never come is fine; after the wait the fuzzer hangs up.
  await Promise.race([closed.promise, Bun.sleep(request.framing === 'short-length' || request.framing === 'truncated' ? 300 : 3000)]);
  socket.terminate();
  const statuses = [...received.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((match) => Number(match[1]));
  return { statuses: statuses.length ? statuses : [0], ms: performance.now() - started };
}

/** Put the request on the wire to the server at `url`: by fetch, or on a raw socket for framing faults. */
export const sendRequest = (url: string, request: FuzzRequest): Promise<Outcome> => (request.framing === 'fetch' ? sendFetch(url, request) : sendRaw(url, request));

export function describeRequest(request: FuzzRequest): string {
  const body = request.body ? new TextDecoder().decode(request.body.subarray(0, 120)) : '';
  return `#${request.index} ${request.method} ${request.path.slice(0, 160)} [${request.framing}, target ${request.target}] headers=${JSON.stringify(request.headers).slice(0, 300)} body(${request.body?.length ?? 0})=${JSON.stringify(body)}`;
}

// ---- the run ------------------------------------------------------------------------------------

export interface FuzzReport {
  seed: number;
  requests: number;
  byStatus: Map<number, number>;
  /** Each request answered with a 5xx, described so it can be replayed. */
  serverErrors: string[];
  /** Each request under a stray path prefix (a path naming no route) that was answered as if it named one (a 2xx or 3xx). */
  strayAnswered: string[];
  /** /healthz probes taken during the run that did not answer 200 within 2 s. */
  healthFailures: string[];
  healthChecks: number;
  worstMs: number;
  worstRequest: string;
  /** Route-table entries the run made requests from. */
  routesHit: Set<string>;
  /** Per target: RSS in bytes after the warm-up, at the highest, and after the run settled. */
  rss: { limits: string; start: number; peak: number; end: number }[];
}

/**
 * Send `requests` generated requests (index 0..requests-1 of `seed`), `concurrency` at a time, across
 * the targets, while a probe asks every target's /healthz every 200 ms and RSS is sampled.
 */
export async function runFuzz(options: { seed: number; requests: number; targets: FuzzTarget[]; concurrency?: number; onProgress?: (done: number) => void }): Promise<FuzzReport> {
  const { seed, requests, targets } = options;
  const concurrency = options.concurrency ?? 16;
  const report: FuzzReport = { seed, requests, byStatus: new Map(), serverErrors: [], strayAnswered: [], healthFailures: [], healthChecks: 0, worstMs: 0, worstRequest: '', routesHit: new Set(), rss: [] };
  // The start of RSS is taken after a short warm-up of plain requests: JIT and first-use caches are not leaks.
  for (const target of targets) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => fetch(target.server.url + (i % 2 ? '/healthz' : '/')).then((r) => r.arrayBuffer())));
    const start = rssOf(target.server.proc.pid);
    report.rss.push({ limits: target.limits, start, peak: start, end: start });
  }
  let running = true;
  const health = (async () => {
    while (running) {
      for (const [i, target] of targets.entries()) {
        report.rss[i]!.peak = Math.max(report.rss[i]!.peak, rssOf(target.server.proc.pid));
        report.healthChecks++;
        const started = performance.now();
        try {
          const response = await fetch(`${target.server.url}/healthz`, { signal: AbortSignal.timeout(2000) });
          await response.arrayBuffer();
          if (response.status !== 200) report.healthFailures.push(`${response.status} after ${report.byStatus.size} statuses`);
        } catch (error) {
          report.healthFailures.push(`no answer in ${Math.round(performance.now() - started)} ms (${(error as Error).name})`);
        }
      }
      await Bun.sleep(200);
    }
  })();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < requests) {
      const request = generateRequest(seed, next++, targets[0]!.routes, targets[0]!.credentials, targets.length);
      const target = targets[request.target]!;
      report.routesHit.add(request.route);
      const outcome = await sendRequest(target.server.url, request);
      for (const status of outcome.statuses) {
        report.byStatus.set(status, (report.byStatus.get(status) ?? 0) + 1);
        if (status >= 500) report.serverErrors.push(`${status} ${describeRequest(request)}`);
        if (request.strayPrefix !== null && status >= 200 && status < 400) report.strayAnswered.push(`${status} ${describeRequest(request)}`);
      }
      // Raw-socket requests wait on purpose (for bytes that never come); latency is that of whole requests.
      if (request.framing === 'fetch' && outcome.ms > report.worstMs) {
        report.worstMs = outcome.ms;
        report.worstRequest = describeRequest(request);
      }
      options.onProgress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  running = false;
  await health;
  // Let the server settle (sockets closed, bodies released), then take the end reading.
  for (const [i, target] of targets.entries()) {
    const entry = report.rss[i]!;
    const deadline = Date.now() + 5000;
    do {
      await Bun.sleep(250);
      entry.end = rssOf(target.server.proc.pid);
    } while (!rssSettled(entry) && Date.now() < deadline);
  }
  return report;
}

/** "Near its start": within 64 MiB or half the start, whichever is more (allocator caches hold some pages). */
export function rssSettled(rss: { start: number; end: number }): boolean {
  return rss.end <= rss.start + Math.max(64 * 1024 * 1024, rss.start / 2);
}

const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export function formatReport(report: FuzzReport): string {
  const statuses = [...report.byStatus.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status === 0 ? 'no answer' : status}: ${count}`);
  return [
    `seed ${report.seed}, ${report.requests} requests`,
    `by status: ${statuses.join(', ')}`,
    `5xx: ${report.serverErrors.length}; stray prefixes answered: ${report.strayAnswered.length}; /healthz failures: ${report.healthFailures.length} of ${report.healthChecks}`,
    `worst latency: ${report.worstMs.toFixed(0)} ms (${report.worstRequest.slice(0, 240)})`,
    ...report.rss.map((rss) => `RSS (${rss.limits} limits): start ${MiB(rss.start)}, peak ${MiB(rss.peak)}, end ${MiB(rss.end)}`),
  ].join('\n');
}
