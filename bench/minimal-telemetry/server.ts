#!/usr/bin/env bun
// A minimal implementation of svc's telemetry contract (POST /api/v1/probe/telemetry, spec §4.1, mode 2
// only), the yardstick of issue 30 item 5: what a small Bun server does per scan, to compare svc with.
// A hand-written router (a Map of method and path), the signed sk_live_ key of mode 2 (found by its
// SHA-256 in a Map loaded at start, compared in constant time, HMAC-SHA256 over "<timestamp>.<raw
// body>" within 5 minutes), svc's TypeBox schema of the payload compiled once, an in-memory token
// bucket per key, a GeoIP country from an MMDB file (mmdb-lib), and bun:sqlite (WAL,
// synchronous=NORMAL) with group commit: rows queue until the end of the event-loop turn, one
// transaction writes them, and each request is answered 204 after that COMMIT.
// What it leaves out that svc does: mode 1 (lead tokens) and the other tiers, bounded JSON parsing
// (nesting and size limits), keeping refused optional fields in `data`, the data cap, request log,
// metrics, rollups, retention, the badge index, CORS, and write pauses for WAL checkpoints.
// It prints {"url": ...} on stdout when listening (bench/lib/harness.ts, spawnServer).
// Usage: bun bench/minimal-telemetry/server.ts --db FILE --keys KEYS.json --geoip FILE.mmdb [--rate 1000]
//   KEYS.json: [{"id", "keyHash" (hex SHA-256 of the raw key), "scopes": [...]}]; --rate: scans per minute per key.
import { Database } from 'bun:sqlite';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Reader, type CountryResponse } from 'mmdb-lib';
import { BlockList } from 'node:net';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { hmacSha256, safeEqual, sha256Hex } from '../../src/lib/crypto.ts';
import { telemetryPayload } from '../../src/telemetry/model.ts';

const { values: options } = parseArgs({ options: { db: { type: 'string' }, keys: { type: 'string' }, geoip: { type: 'string' }, rate: { type: 'string', default: '1000' } } });
if (!options.db || !options.keys || !options.geoip) throw new Error('usage: server.ts --db FILE --keys KEYS.json --geoip FILE.mmdb [--rate N]');

const REPLAY_WINDOW_MS = 5 * 60_000;
const MAX_BODY_BYTES = 512 * 1024;
const KNOWN_FIELDS = new Set(Object.keys(telemetryPayload.properties));
const PRESENCE = ['title', 'description', 'jsonLd', 'openGraph', 'h1', 'canonical', 'robots'] as const;

const error = (status: number, code: string, detail: string, headers: Record<string, string> = {}) => Response.json({ error: code, detail }, { status, headers });

// Keys: by SHA-256 of the raw key.
interface Key { id: string; keyHash: string; scopes: string[] }
const keys = new Map<string, Key>((JSON.parse(readFileSync(options.keys, 'utf8')) as Key[]).map((key) => [key.keyHash, key]));

// Token buckets, one per key (bounded: keys are only those loaded at start).
const RATE = Number(options.rate);
const buckets = new Map<string, { tokens: number; at: number }>();
function take(keyId: string, now: number): boolean {
  const bucket = buckets.get(keyId) ?? { tokens: RATE, at: now };
  bucket.tokens = Math.min(RATE, bucket.tokens + ((now - bucket.at) * RATE) / 60_000);
  bucket.at = now;
  buckets.set(keyId, bucket);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

// GeoIP: loopback and private addresses have no country and are not looked up.
const geo = new Reader<CountryResponse>(readFileSync(options.geoip));
const PRIVATE = new BlockList();
for (const [net, prefix] of [['10.0.0.0', 8], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::1', 128], ['fc00::', 7], ['fe80::', 10]] as const) PRIVATE.addSubnet(net, prefix, 'ipv6');
function countryOf(address: string | undefined): string | null {
  if (!address) return null;
  const ip = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  if (PRIVATE.check(ip, ip.includes(':') ? 'ipv6' : 'ipv4')) return null;
  const record = geo.get(ip) as (CountryResponse & { country_code?: string }) | null;
  return record?.country?.iso_code ?? record?.country_code ?? null;
}

// Storage: svc's scans columns, two indexes, group commit.
const db = new Database(options.db, { create: true, strict: true });
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
db.exec(`CREATE TABLE IF NOT EXISTS scans (id TEXT PRIMARY KEY NOT NULL, hostname TEXT NOT NULL, url TEXT NOT NULL, scanned_at INTEGER NOT NULL,
  received_at INTEGER NOT NULL, country TEXT, platform TEXT, platform_confidence REAL, page_type TEXT, grade TEXT NOT NULL, percentage REAL NOT NULL,
  svc_detected INTEGER, svc_version TEXT, vertical TEXT, has_title INTEGER, has_description INTEGER, has_json_ld INTEGER, has_open_graph INTEGER,
  has_h1 INTEGER, has_canonical INTEGER, has_robots INTEGER, signals TEXT NOT NULL, quality TEXT NOT NULL, data TEXT NOT NULL, trust INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS scans_hostname_scanned_at_idx ON scans (hostname, scanned_at);
  CREATE INDEX IF NOT EXISTS scans_scanned_at_idx ON scans (scanned_at);`);
const insert = db.prepare(`INSERT INTO scans VALUES (${new Array(25).fill('?').join(', ')})`);
type Row = (string | number | null)[];
const insertAll = db.transaction((rows: Row[]) => {
  for (const row of rows) insert.run(...row);
});
let queue: { row: Row; done: (ok: boolean) => void }[] = [];
function flush(): void {
  const group = queue;
  queue = [];
  let ok = true;
  try {
    insertAll(group.map((entry) => entry.row));
  } catch (failure) {
    console.error(JSON.stringify({ level: 'error', msg: 'scan batch failed', rows: group.length, error: String(failure) }));
    ok = false;
  }
  for (const entry of group) entry.done(ok);
}
function write(row: Row): Promise<boolean> {
  if (queue.length === 0) setImmediate(flush);
  return new Promise((done) => queue.push({ row, done }));
}

// The payload: svc's schema, compiled once; then the row, as svc normalises it.
const payload = TypeCompiler.Compile(telemetryPayload);
type Payload = typeof telemetryPayload.static;
const bit = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);
function rowOf(scan: Payload, now: number, country: string | null): Row | string {
  const scannedAt = scan.scannedAt === undefined ? now : Date.parse(scan.scannedAt);
  if (Number.isNaN(scannedAt)) return 'scannedAt is not a valid time';
  if (scannedAt > now + REPLAY_WINDOW_MS) return 'scannedAt is more than 5 minutes ahead of server time';
  const hostname = scan.hostname.toLowerCase().replace(/\.$/, '');
  const data: Record<string, unknown> = {};
  for (const field in scan) if (!KNOWN_FIELDS.has(field)) data[field] = (scan as Record<string, unknown>)[field];
  const quality = { grade: 'F', percentage: 0, ...scan.quality };
  const presence = scan.signalPresence ?? {};
  return [Bun.randomUUIDv7(), hostname, scan.url?.replace(/[?#].*$/s, '') ?? `https://${hostname}/`, scannedAt, now,
    scan.country?.toUpperCase() ?? country, scan.platform?.platform ?? null, scan.platform?.confidence ?? null, scan.pageType ?? null,
    quality.grade, quality.percentage, bit(scan.svc?.detected), scan.svc?.version ?? null, scan.vertical?.trim() ?? null,
    ...PRESENCE.map((key) => bit(presence[key])), JSON.stringify(scan.signals), JSON.stringify(quality), JSON.stringify(data), 2];
}

async function telemetry(request: Request, server: Bun.Server<undefined>): Promise<Response> {
  const now = Date.now();
  const rawKey = request.headers.get('x-probe-key');
  const timestamp = request.headers.get('x-probe-timestamp');
  const signature = request.headers.get('x-probe-signature');
  if (rawKey === null || timestamp === null || signature === null) return error(401, 'missing_credentials', 'send X-Probe-Key with X-Probe-Timestamp and X-Probe-Signature');
  const hash = sha256Hex(rawKey);
  const key = keys.get(hash);
  if (!key || !safeEqual(key.keyHash, hash)) return error(401, 'invalid_api_key', 'the API key is unknown, malformed or revoked');
  if (!key.scopes.includes('probe:scan') && !key.scopes.includes('admin')) return error(401, 'insufficient_scope', 'this key needs the probe:scan or admin scope');
  if (!take(key.id, now)) return error(429, 'rate_limited', `the agent tier allows ${RATE} scans per minute`, { 'Retry-After': String(Math.ceil(60 / RATE)) });
  if (!/^\d{1,15}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > REPLAY_WINDOW_MS) return error(401, 'timestamp_out_of_window', 'X-Probe-Timestamp must be epoch milliseconds within 5 minutes of server time');
  const body = new Uint8Array(await request.arrayBuffer());
  const expected = hmacSha256(rawKey, [`${timestamp}.`, body], 'hex');
  if (!safeEqual(expected, signature.trim().toLowerCase())) return error(401, 'invalid_signature', 'X-Probe-Signature is not the HMAC-SHA256 of "<timestamp>.<raw body>"');
  let scan: unknown;
  try {
    scan = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return error(400, 'invalid_json', 'the body is not JSON');
  }
  if (!payload.Check(scan)) {
    const first = payload.Errors(scan).First();
    return error(400, 'invalid_payload', `${first?.path || '/'}: ${first?.message ?? 'not a telemetry payload'}`);
  }
  const row = rowOf(scan, now, (scan as Payload).country === undefined ? countryOf(server.requestIP(request)?.address) : null);
  if (typeof row === 'string') return error(400, 'invalid_field', row);
  if (!(await write(row))) return error(500, 'persistence_failed', 'the scan could not be stored; retry later');
  return new Response(null, { status: 204 });
}

// The router: method and path to handler.
type Handler = (request: Request, server: Bun.Server<undefined>) => Response | Promise<Response>;
const routes = new Map<string, Handler>([['POST /api/v1/probe/telemetry', telemetry]]);

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  maxRequestBodySize: MAX_BODY_BYTES,
  fetch(request, server) {
    const url = request.url;
    const start = url.indexOf('/', url.indexOf('//') + 2);
    const query = url.indexOf('?', start);
    const handler = routes.get(`${request.method} ${url.slice(start, query === -1 ? undefined : query)}`);
    return handler ? handler(request, server) : error(404, 'not_found', 'no such route');
  },
  error: () => error(500, 'internal', 'the request failed'),
});
process.on('SIGTERM', () => {
  server.stop(true);
  if (queue.length > 0) flush();
  db.close();
  process.exit(0);
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
