import { GRADES, PAGE_TYPES, PRESENCE_KEYS, SCAN_PLATFORMS, type PresenceKey } from '../db/schema/scans.ts';
import { countryCode } from '../lib/country.ts';
import { normalizeHostname } from '../lib/hostname.ts';
import { parseTimestamp } from '../lib/time.ts';

// Spec §2.1–2.3 and DESIGN §7: `hostname` and `signals` are required (400 when missing or invalid);
// every other field is best-effort. An optional field that breaks its rule is left out of its
// column (the column's default applies) and its raw value is kept in `data` under its own name,
// beside every unknown field. One function, shared by the single and the bulk endpoints.

export const QUALITY_SCORES = ['title', 'description', 'keywords', 'jsonLd', 'openGraph'] as const;
/** The payload fields of spec §2.1; every other field goes to `data` as is. */
const KNOWN_FIELDS = new Set(['hostname', 'signals', 'url', 'scannedAt', 'platform', 'pageType', 'svc', 'signalPresence', 'quality', 'country', 'vertical']);

export const LIMITS = { url: 2048, hostname: 253, text: 2048, vertical: 64, version: 64, robots: 512, lang: 35, score: 1000 } as const;

/**
 * How far the server trusts who sent a scan, from how it was authenticated: 0 an unverified lead's
 * token (anyone can sign up for one), 1 a verified lead's token, 2 a request signed with an agent
 * key. The badge shows a hostname's most trusted scan, the most recently received among equals,
 * so a scan from a throwaway sign-up never outranks the site's own signed scans.
 */
export type ScanTrust = 0 | 1 | 2;

/** scannedAt may run ahead of server time by at most this much (clock skew), as for signed requests. */
export const MAX_SCANNED_AT_AHEAD_MS = 5 * 60_000;

/** A scan ready to store: the columns of the scans table, minus id and receivedAt. */
export interface NormalizedScan {
  hostname: string;
  url: string;
  scannedAt: number;
  country: string | null;
  platform: string | null;
  platformConfidence: number | null;
  pageType: string | null;
  grade: string;
  percentage: number;
  svcDetected: boolean | null;
  svcVersion: string | null;
  vertical: string | null;
  presence: Record<PresenceKey, boolean | null>;
  signals: Record<string, unknown>;
  quality: Record<string, unknown>;
  data: Record<string, unknown>;
  /** Set from the request's authentication once the scan is admitted; 0 until then. */
  trust: ScanTrust;
}

export type ScanValidation = { ok: true; scan: NormalizedScan } | { ok: false; error: string; detail: string };

type Json = Record<string, unknown>;

const payloadObject = (): Json => Object.create(null) as Json;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;
const inRange = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
const oneOf = <T extends string>(values: readonly T[], value: unknown): value is T => typeof value === 'string' && (values as readonly string[]).includes(value);

/** Absolute http(s) URL without query or fragment (the server strips them too), or null. */
export function normalizeUrl(value: unknown): string | null {
  if (!isText(value, LIMITS.url)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return null;
  url.search = '';
  url.hash = '';
  return url.href.length <= LIMITS.url ? url.href : null;
}

/** Rules for the known keys of `signals` (spec §2.2); unknown keys pass through untouched. */
const SIGNAL_RULES: Record<string, (value: unknown) => boolean> = {
  title: (v) => isObject(v) && isText(v.value ?? '', LIMITS.text) && (v.length === undefined || Number.isInteger(v.length)),
  description: (v) => isObject(v) && isText(v.value ?? '', LIMITS.text) && (v.length === undefined || Number.isInteger(v.length)),
  canonical: (v) => isObject(v) && isText(v.value ?? '', LIMITS.url),
  robots: (v) => isText(v, LIMITS.robots),
  lang: (v) => isText(v, LIMITS.lang),
  headings: (v) =>
    isObject(v) && ['h1', 'h2'].every((k) => v[k] === undefined || (Array.isArray(v[k]) && (v[k] as unknown[]).every((h) => isText(h, LIMITS.text)))),
  openGraph: (v) => isObject(v) && Object.values(v).every((s) => isText(s, LIMITS.text)),
  jsonLd: (v) => Array.isArray(v),
};

/**
 * Validate and normalize one telemetry payload (already parsed JSON). `now` is the server time
 * used when `scannedAt` is absent or invalid. Country from GeoIP is the caller's step.
 */
export function normalizeScan(input: unknown, now: number): ScanValidation {
  if (!isObject(input)) return { ok: false, error: 'invalid_payload', detail: 'the body must be a JSON object' };
  const hostname = normalizeHostname(input.hostname);
  if (hostname === null) {
    return input.hostname === undefined
      ? { ok: false, error: 'missing_field', detail: 'hostname is required' }
      : { ok: false, error: 'invalid_field', detail: `hostname must be a bare host name (no scheme, path, port or whitespace) of at most ${LIMITS.hostname} characters` };
  }
  if (!isObject(input.signals)) {
    return input.signals === undefined
      ? { ok: false, error: 'missing_field', detail: 'signals is required' }
      : { ok: false, error: 'invalid_field', detail: 'signals must be a JSON object' };
  }

  // Unknown fields first; refused values of known fields are added below. Objects keyed by the
  // payload's own keys have no prototype: no key can reach or re-parent a shared prototype.
  const data = payloadObject();
  for (const field of Object.keys(input)) if (!KNOWN_FIELDS.has(field)) data[field] = input[field];
  const { signals: rawSignals, url: rawUrl, scannedAt: rawScannedAt, platform: rawPlatform, pageType: rawPageType, svc: rawSvc,
    signalPresence: rawPresence, quality: rawQuality, country: rawCountry, vertical: rawVertical } = input;
  /** Keep a field's raw value in `data` when any part of it was refused. */
  const keepRaw = (field: string, raw: unknown, accepted: boolean) => {
    if (!accepted && raw !== undefined) data[field] = raw;
  };

  const signals = payloadObject();
  let signalsAccepted = true;
  for (const key of Object.keys(rawSignals)) {
    const value = rawSignals[key];
    if (SIGNAL_RULES[key] && !SIGNAL_RULES[key](value)) signalsAccepted = false;
    else signals[key] = value;
  }
  keepRaw('signals', rawSignals, signalsAccepted);

  const url = normalizeUrl(rawUrl);
  keepRaw('url', rawUrl, url !== null);

  const scannedAt = parseTimestamp(rawScannedAt);
  keepRaw('scannedAt', rawScannedAt, scannedAt !== null);
  if (scannedAt !== null && scannedAt > now + MAX_SCANNED_AT_AHEAD_MS) {
    return {
      ok: false,
      error: 'scanned_at_in_future',
      detail: `scannedAt ${String(rawScannedAt)} is more than 5 minutes ahead of server time (${new Date(now).toISOString()}); send the time the page was scanned`,
    };
  }

  let platform: string | null = null;
  let platformConfidence: number | null = null;
  if (isObject(rawPlatform)) {
    if (oneOf(SCAN_PLATFORMS, rawPlatform.platform)) platform = rawPlatform.platform;
    if (inRange(rawPlatform.confidence, 0, 1)) platformConfidence = rawPlatform.confidence;
  }
  keepRaw('platform', rawPlatform, isObject(rawPlatform) && onlyKnown(rawPlatform, ['platform', 'confidence']) &&
    (rawPlatform.platform === undefined || platform !== null) && (rawPlatform.confidence === undefined || platformConfidence !== null));

  const pageType = oneOf(PAGE_TYPES, rawPageType) ? rawPageType : null;
  keepRaw('pageType', rawPageType, pageType !== null);

  let svcDetected: boolean | null = null;
  let svcVersion: string | null = null;
  if (isObject(rawSvc)) {
    if (typeof rawSvc.detected === 'boolean') svcDetected = rawSvc.detected;
    if (isText(rawSvc.version, LIMITS.version)) svcVersion = rawSvc.version;
  }
  keepRaw('svc', rawSvc, isObject(rawSvc) && onlyKnown(rawSvc, ['detected', 'version']) &&
    (rawSvc.detected === undefined || svcDetected !== null) && (rawSvc.version === undefined || svcVersion !== null));

  const presence = Object.fromEntries(PRESENCE_KEYS.map((k) => [k, null])) as Record<PresenceKey, boolean | null>;
  let presenceAccepted = isObject(rawPresence);
  if (isObject(rawPresence)) {
    for (const key of Object.keys(rawPresence)) {
      const value = rawPresence[key];
      if (oneOf(PRESENCE_KEYS, key) && typeof value === 'boolean') presence[key] = value;
      else presenceAccepted = false;
    }
  }
  keepRaw('signalPresence', rawPresence, presenceAccepted);

  const quality = Object.assign(payloadObject(), { grade: 'F', percentage: 0 });
  let qualityAccepted = isObject(rawQuality);
  if (isObject(rawQuality)) {
    for (const key of Object.keys(rawQuality)) {
      const value = rawQuality[key];
      const valid =
        key === 'grade' ? oneOf(GRADES, value)
        : key === 'percentage' ? inRange(value, 0, 100)
        : oneOf(QUALITY_SCORES, key) && Number.isInteger(value) && inRange(value, -LIMITS.score, LIMITS.score);
      if (valid) quality[key] = value;
      else qualityAccepted = false;
    }
  }
  keepRaw('quality', rawQuality, qualityAccepted);

  const country = countryCode(rawCountry);
  keepRaw('country', rawCountry, country !== null);

  const vertical = typeof rawVertical === 'string' && rawVertical.trim() !== '' && rawVertical.length <= LIMITS.vertical ? rawVertical.trim() : null;
  keepRaw('vertical', rawVertical, vertical !== null);

  return {
    ok: true,
    scan: {
      hostname,
      url: url ?? `https://${hostname}/`,
      scannedAt: scannedAt ?? now,
      country,
      platform,
      platformConfidence,
      pageType,
      grade: quality.grade as string,
      percentage: quality.percentage as number,
      svcDetected,
      svcVersion,
      vertical,
      presence,
      signals,
      quality,
      data,
      trust: 0,
    },
  };
}

function onlyKnown(object: Json, keys: string[]): boolean {
  return Object.keys(object).every((k) => keys.includes(k));
}
