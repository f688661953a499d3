import type { GeoLookup } from '../geo/lookup.ts';
import type { Clock } from '../lib/clock.ts';
import { parseJsonBytes, readBodyLimited } from '../lib/body.ts';
import { ApiError } from '../lib/errors.ts';
import { authenticateProbe, type Admission } from './admission.ts';
import { normalizeScan, type NormalizedScan } from './payload.ts';
import type { ScanWriter } from './writer.ts';

export interface IngestDeps {
  geo: GeoLookup;
  writer: ScanWriter;
  clock: Clock;
  maxBodyBytes: number;
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
