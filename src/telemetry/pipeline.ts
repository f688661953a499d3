import type { GeoLookup } from '../geo/lookup.ts';
import type { Clock } from '../lib/clock.ts';
import { parseJsonBytes, readBodyLimited } from '../lib/body.ts';
import { ApiError } from '../lib/errors.ts';
import { JSON_LIMITS, JsonStructureScan, jsonLimitError } from '../lib/json-limits.ts';
import { rateLimitedError, type TierDecision, type TierLimiter } from '../ratelimit/tiers.ts';
import { authenticateProbe, type Admission } from './admission.ts';
import { normalizeScan, type NormalizedScan, type ScanTrust, type ScanValidation } from './payload.ts';
import type { ScanWriter } from './writer.ts';

export interface IngestDeps {
  geo: GeoLookup;
  writer: ScanWriter;
  clock: Clock;
  maxBodyBytes: number;
  /** SVC_MAX_SCAN_DATA_BYTES: most bytes of a scan's `data`. */
  maxScanDataBytes: number;
}

/** At most this many scans in one bulk request (DESIGN §5). */
export const MAX_BULK_SCANS = 1000;
const MIB = 1024 * 1024;

/**
 * Body limit of a bulk request: `SVC_MAX_BODY_BYTES` bounds one scan, and a full batch of ordinary
 * 1–3 KB scans needs a few MiB, so bulk bodies may take 16 MiB (or the single limit, if larger).
 */
export const bulkBodyLimit = (maxBodyBytes: number) => Math.max(maxBodyBytes, 16 * MIB);

export interface BulkResult {
  inserted: number;
  skipped: number;
  errors: { index: number; error: string; detail: string }[];
}

/**
 * The normaliser plus the storage cap on `data` (the unknown fields and refused values it keeps
 * verbatim): without it one scan could park up to the whole body limit in the database as extras.
 */
export function validateScan(input: unknown, now: number, maxScanDataBytes: number): ScanValidation {
  const result = normalizeScan(input, now);
  if (!result.ok) return result;
  const dataBytes = Buffer.byteLength(JSON.stringify(result.scan.data));
  if (dataBytes <= maxScanDataBytes) return result;
  return {
    ok: false,
    error: 'data_too_large',
    detail: `the unknown fields and refused values kept in the scan's data take ${dataBytes} bytes as JSON, more than the limit of ${maxScanDataBytes} (SVC_MAX_SCAN_DATA_BYTES)`,
  };
}

/** Step 5, parse/validate: raw bytes -> a normalized scan, or 400. */
export function parseScan(bytes: Uint8Array, now: number, maxScanDataBytes: number): NormalizedScan {
  const result = validateScan(parseJsonBytes(bytes), now, maxScanDataBytes);
  if (!result.ok) throw new ApiError(400, result.error, result.detail);
  return result.scan;
}

/**
 * The trust of a scan from its admission tier: only authenticated scans are ever stored. Probe
 * routes never admit the webhook tier; it is listed at the lowest trust only to keep the map total.
 */
const TRUST_OF_TIER: Record<Admission['subject']['tier'], ScanTrust> = { anonymous: 0, authed: 1, agent: 2, webhook: 0 };

/**
 * Step 6, enrich: an explicit valid country wins, else GeoIP of the client address (never stored);
 * the trust its authentication earned (an unverified lead's token is the only anonymous way in).
 */
export function enrich(scan: NormalizedScan, admission: Admission, geo: GeoLookup): NormalizedScan {
  if (scan.country === null && admission.clientIp !== null) scan.country = geo.country(admission.clientIp);
  scan.trust = TRUST_OF_TIER[admission.subject.tier];
  return scan;
}

/**
 * `geo` remembering its last answer: every scan of a bulk request comes from one client address,
 * looked up once instead of once per scan (2–4 µs each for a public address).
 */
function lastAnswerGeo(geo: GeoLookup): GeoLookup {
  let lastIp: string | null = null;
  let lastCountry: string | null = null;
  return {
    source: geo.source,
    country(ip) {
      if (ip !== lastIp) {
        lastCountry = geo.country(ip);
        lastIp = ip;
      }
      return lastCountry;
    },
  };
}

/**
 * Steps 3–8 of the telemetry pipeline (DESIGN §7); steps 1–2 (classify tier, rate limit) ran in
 * the probe admission hook. Resolves once the scan is committed; every step rejects with an ApiError.
 */
export async function ingestTelemetry(request: Request, admission: Admission, deps: IngestDeps): Promise<void> {
  const bytes = await readBodyLimited(request, deps.maxBodyBytes); // 3. body limit
  const now = deps.clock.now();
  const authenticating = authenticateProbe(admission.credentials, request.headers, bytes, now); // 4. authenticate
  if (authenticating) await authenticating;
  const scan = parseScan(bytes, now, deps.maxScanDataBytes); // 5. parse/validate
  enrich(scan, admission, deps.geo); // 6. enrich
  await deps.writer.write(scan, now); // 7–8. buffer, commit
}

/** Bytes of a bulk body scanned per event-loop turn (about a millisecond on a busy core). */
const SCAN_SLICE_BYTES = 64 * 1024;
/** Items are parsed and validated for at most this long before other requests get a turn. */
const SLICE_MS = 4;

/** Let other requests run; the caller continues in a later event-loop turn. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The structure scan of `{"scans":[...]}`, run in slices (so a 16 MiB body never holds the event
 * loop): the byte spans of its items and which of them need the reserved-key check, with the nesting
 * and value limits applied to each item: 400 naming the limit and the item that broke it, or
 * `too_many_scans` as soon as there are more than MAX_BULK_SCANS.
 */
async function scanBulkItems(bytes: Uint8Array): Promise<JsonStructureScan> {
  const scan = new JsonStructureScan(bytes, JSON_LIMITS, 2, MAX_BULK_SCANS);
  for (;;) {
    scan.advance(scan.position + SCAN_SLICE_BYTES);
    if (scan.done) break;
    await nextTurn();
  }
  if (scan.breach) throw jsonLimitError(scan.breach, JSON_LIMITS, 'scans');
  if (scan.tooManyItems) throw new ApiError(400, 'too_many_scans', `scans holds more than ${MAX_BULK_SCANS} items; at most ${MAX_BULK_SCANS} per request`);
  return scan;
}

const ITEM_PLACEHOLDER = new TextEncoder().encode('0');

/**
 * `{"scans":[...]}` with 1 to MAX_BULK_SCANS items, else 400. The envelope is checked as JSON with
 * each item replaced by `0`, so it is parsed in full (and strictly) without parsing any item.
 */
function checkBulkEnvelope(bytes: Uint8Array, spans: [number, number][]): void {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const [start, end] of spans) {
    parts.push(bytes.subarray(from, start), ITEM_PLACEHOLDER);
    from = end;
  }
  parts.push(bytes.subarray(from));
  const body = parseJsonBytes(Buffer.concat(parts));
  const invalid = (detail: string) => new ApiError(400, 'invalid_request', detail);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object {"scans":[...]}');
  const unknown = Object.keys(body).find((key) => key !== 'scans');
  if (unknown !== undefined) throw invalid(`unknown field ${JSON.stringify(unknown)}; the body is {"scans":[...]}`);
  const { scans } = body as { scans?: unknown };
  if (!Array.isArray(scans)) throw invalid('scans must be an array of telemetry payloads');
  if (scans.length === 0) throw invalid('scans must hold at least one scan');
  // Only a repeated "scans" key leaves items outside the array JSON.parse keeps.
  if (scans.length !== spans.length) throw invalid('the body holds "scans" more than once');
}

/**
 * The bulk variant of the same pipeline (POST /api/v1/probe/scan-bulk): the same admission, body
 * limit, authentication, normaliser and enrichment, then one token per scan (the admission hook took
 * the first; the rest are taken all-or-nothing, so a batch the bucket cannot cover is 429 and nothing
 * is stored). Each item is held to the single-scan limits (SVC_MAX_BODY_BYTES, the data cap) and
 * parsed on its own, in time slices. Invalid items are reported by index; valid ones are committed
 * in one transaction with (url, scannedAt) duplicates skipped.
 */
export async function ingestBulk(
  request: Request,
  admission: Admission,
  deps: IngestDeps & { limiter: TierLimiter },
): Promise<{ result: BulkResult; decision: TierDecision }> {
  const bytes = await readBodyLimited(request, bulkBodyLimit(deps.maxBodyBytes));
  const now = deps.clock.now();
  await authenticateProbe(admission.credentials, request.headers, bytes, now);
  const scan = await scanBulkItems(bytes);
  const spans = scan.items;
  checkBulkEnvelope(bytes, spans);
  const capacity = admission.decision.limit;
  if (spans.length > capacity) {
    // A 429 would say "retry in n s", but a batch above the bucket's capacity can never pass.
    throw new ApiError(400, 'batch_exceeds_limit', `the batch holds ${spans.length} scans, more than the ${admission.subject.tier} tier's capacity of ${capacity} scans per minute (one token per scan); split it into batches of at most ${capacity}`, {}, { limit: capacity, tier: admission.subject.tier });
  }
  const decision = spans.length > 1 ? await deps.limiter.take(admission.subject, spans.length - 1) : admission.decision;
  // A retry's admission takes its first token again before the batch is counted, so Retry-After
  // covers the whole batch (one token more than this take missed), not only the rest of it.
  if (!decision.allowed) throw rateLimitedError({ ...decision, retryAfterSeconds: Math.ceil(decision.retryAfterSeconds + 60 / decision.limit) });

  const geo = lastAnswerGeo(deps.geo);
  const valid: NormalizedScan[] = [];
  const errors: BulkResult['errors'] = [];
  let sliceStart = performance.now();
  for (const [index, [start, end]] of spans.entries()) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    if (end - start > deps.maxBodyBytes) {
      errors.push({ index, error: 'scan_too_large', detail: `the scan takes ${end - start} bytes; one scan may take at most ${deps.maxBodyBytes} (SVC_MAX_BODY_BYTES)` });
      continue;
    }
    const item = parseJsonBytes(bytes.subarray(start, end), null, `scans[${index}]`, !scan.unclearedItems.has(index));
    const checked = validateScan(item, now, deps.maxScanDataBytes);
    if (checked.ok) valid.push(enrich(checked.scan, admission, geo));
    else errors.push({ index, error: checked.error, detail: checked.detail });
  }
  const inserted = valid.length > 0 ? await deps.writer.writeBulk(valid, now) : 0;
  return { result: { inserted, skipped: valid.length - inserted, errors }, decision };
}
