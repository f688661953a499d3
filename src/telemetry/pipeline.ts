import type { GeoLookup } from '../geo/lookup.ts';
import type { Clock } from '../lib/clock.ts';
import { parseJsonBytes, readBodyLimited } from '../lib/body.ts';
import { ApiError } from '../lib/errors.ts';
import { rateLimitedError, type TierDecision, type TierLimiter } from '../ratelimit/tiers.ts';
import { authenticateProbe, type Admission } from './admission.ts';
import { normalizeScan, type NormalizedScan } from './payload.ts';
import type { ScanWriter } from './writer.ts';

export interface IngestDeps {
  geo: GeoLookup;
  writer: ScanWriter;
  clock: Clock;
  maxBodyBytes: number;
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

/** Step 5, parse/validate: raw bytes -> a normalized scan, or 400. */
export function parseScan(bytes: Uint8Array, now: number): NormalizedScan {
  const result = normalizeScan(parseJsonBytes(bytes), now);
  if (!result.ok) throw new ApiError(400, result.error, result.detail);
  return result.scan;
}

/** Step 6, enrich: an explicit valid country wins; else GeoIP of the client address (never stored). */
export function withCountry(scan: NormalizedScan, clientIp: string | null, geo: GeoLookup): NormalizedScan {
  if (scan.country === null && clientIp !== null) scan.country = geo.country(clientIp);
  return scan;
}

/**
 * Steps 3–8 of the telemetry pipeline (DESIGN §7); steps 1–2 (classify tier, rate limit) ran in
 * the probe admission hook. Resolves once the scan is committed; every step rejects with an ApiError.
 */
export async function ingestTelemetry(request: Request, admission: Admission, deps: IngestDeps): Promise<void> {
  const bytes = await readBodyLimited(request, deps.maxBodyBytes); // 3. body limit
  const now = deps.clock.now();
  authenticateProbe(admission.credentials, request.headers, bytes, now); // 4. authenticate
  const scan = parseScan(bytes, now); // 5. parse/validate
  withCountry(scan, admission.clientIp, deps.geo); // 6. enrich
  await deps.writer.write(scan, now); // 7–8. buffer, commit
}

/** `{"scans":[...]}` with 1 to MAX_BULK_SCANS items, else 400. */
function parseBulkEnvelope(bytes: Uint8Array): unknown[] {
  const body = parseJsonBytes(bytes);
  const invalid = (detail: string) => new ApiError(400, 'invalid_request', detail);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object {"scans":[...]}');
  const unknown = Object.keys(body).find((key) => key !== 'scans');
  if (unknown !== undefined) throw invalid(`unknown field ${JSON.stringify(unknown)}; the body is {"scans":[...]}`);
  const { scans } = body as { scans?: unknown };
  if (!Array.isArray(scans)) throw invalid('scans must be an array of telemetry payloads');
  if (scans.length === 0) throw invalid('scans must hold at least one scan');
  if (scans.length > MAX_BULK_SCANS) throw new ApiError(400, 'too_many_scans', `scans holds ${scans.length} items; at most ${MAX_BULK_SCANS} per request`);
  return scans;
}

/**
 * The bulk variant of the same pipeline (POST /api/v1/probe/scan-bulk): the same admission, body
 * limit, authentication, normaliser and enrichment, then one token per scan (the admission hook took
 * the first; the rest are taken all-or-nothing, so a batch the bucket cannot cover is 429 and nothing
 * is stored). Invalid items are reported by index; valid ones are committed in one transaction with
 * (url, scannedAt) duplicates skipped.
 */
export async function ingestBulk(
  request: Request,
  admission: Admission,
  deps: IngestDeps & { limiter: TierLimiter },
): Promise<{ result: BulkResult; decision: TierDecision }> {
  const bytes = await readBodyLimited(request, bulkBodyLimit(deps.maxBodyBytes));
  const now = deps.clock.now();
  authenticateProbe(admission.credentials, request.headers, bytes, now);
  const items = parseBulkEnvelope(bytes);
  const capacity = admission.decision.limit;
  if (items.length > capacity) {
    // A 429 would say "retry in n s", but a batch above the bucket's capacity can never pass.
    throw new ApiError(400, 'batch_exceeds_limit', `the batch holds ${items.length} scans, more than the ${admission.subject.tier} tier's capacity of ${capacity} scans per minute (one token per scan); split it into batches of at most ${capacity}`, {}, { limit: capacity, tier: admission.subject.tier });
  }
  const decision = items.length > 1 ? deps.limiter.take(admission.subject, items.length - 1) : admission.decision;
  if (!decision.allowed) throw rateLimitedError(decision);

  const valid: NormalizedScan[] = [];
  const errors: BulkResult['errors'] = [];
  items.forEach((item, index) => {
    const checked = normalizeScan(item, now);
    if (checked.ok) valid.push(withCountry(checked.scan, admission.clientIp, deps.geo));
    else errors.push({ index, error: checked.error, detail: checked.detail });
  });
  const inserted = valid.length > 0 ? await deps.writer.writeBulk(valid, now) : 0;
  return { result: { inserted, skipped: valid.length - inserted, errors }, decision };
}
