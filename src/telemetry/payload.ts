import { GRADES, PAGE_TYPES, PRESENCE_KEYS, SCAN_PLATFORMS, type PresenceKey } from '../scans/vocabulary.ts';
import { countryCode } from '../lib/country.ts';
import { normalizeHostname } from '../lib/hostname.ts';
import { withoutNul } from '../lib/text.ts';
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

// The normaliser runs for every scan on the request thread (issue 12): it allocates only the
// objects it returns and asks the URL parser once per scan.
const payloadObject = (): Json => Object.create(null) as Json;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;
const inRange = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
const oneOf = <T extends string>(values: readonly T[], value: unknown): value is T => typeof value === 'string' && (values as readonly string[]).includes(value);

/**
 * Absolute http(s) URL without query or fragment (the server strips them too), or null. The parsed
 * URL's href is cut at its query or fragment: an http(s) href holds `?` and `#` only there (the
 * parser percent-encodes them anywhere else), and clearing them through the URL's setters, which
 * serialise and parse again, cost several times the parse itself.
 */
export function normalizeUrl(value: unknown): string | null {
  if (!isText(value, LIMITS.url)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return null;
  const href = url.href;
  const query = href.indexOf('?');
  const fragment = href.indexOf('#');
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  const stripped = end === -1 ? href : href.slice(0, end);
  return stripped.length <= LIMITS.url ? stripped : null;
}

/** An object whose `value`, if set and not null, is text of at most `max` characters. */
const textValue = (v: unknown, max: number): boolean => isObject(v) && isText(v.value ?? '', max);
const textArray = (v: unknown): boolean => {
  if (!Array.isArray(v)) return false;
  for (const item of v) if (!isText(item, LIMITS.text)) return false;
  return true;
};

/** Whether `value` passes the rule of the known `signals` key `key` (spec §2.2); unknown keys pass untouched. */
function signalAccepted(key: string, v: unknown): boolean {
  switch (key) {
    case 'title':
    case 'description':
      return textValue(v, LIMITS.text) && ((v as Json).length === undefined || Number.isInteger((v as Json).length));
    case 'canonical':
      return textValue(v, LIMITS.url);
    case 'robots':
      return isText(v, LIMITS.robots);
    case 'lang':
      return isText(v, LIMITS.lang);
    case 'headings':
      return isObject(v) && (v.h1 === undefined || textArray(v.h1)) && (v.h2 === undefined || textArray(v.h2));
    case 'openGraph':
      if (!isObject(v)) return false;
      for (const key in v) if (!isText(v[key], LIMITS.text)) return false;
      return true;
    case 'jsonLd':
      return Array.isArray(v);
    default:
      return true;
  }
}

/** Keeps a known field's raw value in `data` when it was sent and any part of it was refused. */
function keepRaw(data: Json, field: string, raw: unknown, accepted: boolean): void {
  if (!accepted && raw !== undefined) data[field] = raw;
}

/** Whether every key of `object` is `a` or `b`. */
function onlyKeys(object: Json, a: string, b: string): boolean {
  for (const key in object) if (key !== a && key !== b) return false;
  return true;
}

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
  const rawSignals = input.signals;
  if (!isObject(rawSignals)) {
    return rawSignals === undefined
      ? { ok: false, error: 'missing_field', detail: 'signals is required' }
      : { ok: false, error: 'invalid_field', detail: 'signals must be a JSON object' };
  }

  // Unknown fields first, in the payload's order; then the raw value of each known field any part
  // of which was refused, in the order of the checks below (its stored JSON keeps that order).
  // Objects keyed by the payload's own keys have no prototype: no key can reach or re-parent a
  // shared prototype.
  const data = payloadObject();
  for (const field in input) if (!KNOWN_FIELDS.has(field)) data[field] = input[field];

  const signals = payloadObject();
  let signalsAccepted = true;
  for (const key in rawSignals) {
    const value = rawSignals[key];
    if (signalAccepted(key, value)) signals[key] = value;
    else signalsAccepted = false;
  }
  keepRaw(data, 'signals', rawSignals, signalsAccepted);

  const rawUrl = input.url;
  const url = normalizeUrl(rawUrl);
  keepRaw(data, 'url', rawUrl, url !== null);

  const rawScannedAt = input.scannedAt;
  const scannedAt = parseTimestamp(rawScannedAt);
  keepRaw(data, 'scannedAt', rawScannedAt, scannedAt !== null);
  if (scannedAt !== null && scannedAt > now + MAX_SCANNED_AT_AHEAD_MS) {
    return {
      ok: false,
      error: 'scanned_at_in_future',
      detail: `scannedAt ${String(rawScannedAt)} is more than 5 minutes ahead of server time (${new Date(now).toISOString()}); send the time the page was scanned`,
    };
  }

  const rawPlatform = input.platform;
  let platform: string | null = null;
  let platformConfidence: number | null = null;
  let platformAccepted = false;
  if (isObject(rawPlatform)) {
    const { platform: name, confidence } = rawPlatform;
    if (oneOf(SCAN_PLATFORMS, name)) platform = name;
    if (inRange(confidence, 0, 1)) platformConfidence = confidence;
    platformAccepted = onlyKeys(rawPlatform, 'platform', 'confidence') && (name === undefined || platform !== null) && (confidence === undefined || platformConfidence !== null);
  }
  keepRaw(data, 'platform', rawPlatform, platformAccepted);

  const rawPageType = input.pageType;
  const pageType = oneOf(PAGE_TYPES, rawPageType) ? rawPageType : null;
  keepRaw(data, 'pageType', rawPageType, pageType !== null);

  const rawSvc = input.svc;
  let svcDetected: boolean | null = null;
  let svcVersion: string | null = null;
  let svcAccepted = false;
  if (isObject(rawSvc)) {
    const { detected, version } = rawSvc;
    if (typeof detected === 'boolean') svcDetected = detected;
    // Free text is stored without NUL characters, which PostgreSQL's text refuses (lib/text.ts).
    if (isText(version, LIMITS.version)) svcVersion = withoutNul(version);
    svcAccepted = onlyKeys(rawSvc, 'detected', 'version') && (detected === undefined || svcDetected !== null) && (version === undefined || svcVersion !== null);
  }
  keepRaw(data, 'svc', rawSvc, svcAccepted);

  const rawPresence = input.signalPresence;
  const presence: Record<PresenceKey, boolean | null> = { title: null, description: null, jsonLd: null, openGraph: null, h1: null, canonical: null, robots: null };
  let presenceAccepted = isObject(rawPresence);
  if (presenceAccepted) {
    const raw = rawPresence as Json;
    for (const key in raw) {
      const value = raw[key];
      if (typeof value === 'boolean' && oneOf(PRESENCE_KEYS, key)) presence[key] = value;
      else presenceAccepted = false;
    }
  }
  keepRaw(data, 'signalPresence', rawPresence, presenceAccepted);

  const rawQuality = input.quality;
  const quality = payloadObject();
  quality.grade = 'F';
  quality.percentage = 0;
  let qualityAccepted = isObject(rawQuality);
  if (qualityAccepted) {
    const raw = rawQuality as Json;
    for (const key in raw) {
      const value = raw[key];
      const valid =
        key === 'grade' ? oneOf(GRADES, value)
        : key === 'percentage' ? inRange(value, 0, 100)
        : oneOf(QUALITY_SCORES, key) && Number.isInteger(value) && inRange(value, -LIMITS.score, LIMITS.score);
      if (valid) quality[key] = value;
      else qualityAccepted = false;
    }
  }
  keepRaw(data, 'quality', rawQuality, qualityAccepted);

  const rawCountry = input.country;
  const country = countryCode(rawCountry);
  keepRaw(data, 'country', rawCountry, country !== null);

  const rawVertical = input.vertical;
  const vertical = typeof rawVertical === 'string' && rawVertical.length <= LIMITS.vertical && withoutNul(rawVertical).trim() !== '' ? withoutNul(rawVertical).trim() : null;
  keepRaw(data, 'vertical', rawVertical, vertical !== null);

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
