import { keyHasScope, type ApiKey, type KeyStore } from '../auth/keys.ts';
import type { Lead, LeadStore } from '../auth/leads.ts';
import { hmacSha256Hasher, safeEqual } from '../lib/crypto.ts';
import { ApiError } from '../lib/errors.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import {
  rateLimitedError,
  putRateLimitHeaders,
  type RateSubject,
  type TierDecision,
  type TierLimiter,
} from '../ratelimit/tiers.ts';

/** spec §5 rule 2: the replay window, both ways. */
export const TIMESTAMP_WINDOW_MS = 5 * 60_000;

/** What the headers claim, before any of it is verified. */
export type ProbeCredentials =
  | { mode: 'none' }
  | { mode: 'ambiguous' }
  | { mode: 'token'; lead: Lead | null }
  | { mode: 'key'; rawKey: string | null; key: ApiKey | null };

/** A probe request that passed the rate limiter; the route continues from here. */
export interface Admission {
  credentials: ProbeCredentials;
  subject: RateSubject;
  decision: TierDecision;
  clientIp: string | null;
}

/** What classification made of a probe request's headers. */
interface Classified {
  credentials: ProbeCredentials;
  subject: RateSubject;
}

/**
 * Step 1, classify tier (spec §8, DESIGN §5): from the headers alone, with one indexed lookup by
 * hash and no signature check, so the limiter can count before anything expensive happens.
 * Anything not proven to belong to an agent key or a verified lead draws from the anonymous
 * bucket of the client's address: unknown tokens, unverified leads, both modes at once.
 * At once when the key or token is verified in memory; a promise only when storage is asked.
 */
export function classifyProbe(headers: Headers, keys: KeyStore, leads: LeadStore, anonymous: RateSubject): MaybePromise<Classified> {
  const token = headers.get('x-probe-token');
  const rawKey = headers.get('x-probe-key');
  const signed = rawKey !== null || headers.has('x-probe-timestamp') || headers.has('x-probe-signature');
  if (token !== null && signed) return { credentials: { mode: 'ambiguous' }, subject: anonymous };
  // No closure per request on the way without a promise: this runs for every probe request.
  if (signed) {
    const key = rawKey === null ? null : keys.verify(rawKey);
    return key instanceof Promise ? key.then((found) => byKey(rawKey, found, anonymous)) : byKey(rawKey, key, anonymous);
  }
  if (token !== null) {
    const lead = leads.findByToken(token);
    return lead instanceof Promise ? lead.then((found) => byToken(found, anonymous)) : byToken(lead, anonymous);
  }
  return { credentials: { mode: 'none' }, subject: anonymous };
}

function byKey(rawKey: string | null, key: ApiKey | null, anonymous: RateSubject): Classified {
  const agent = key !== null && keyHasScope(key, 'probe:scan');
  return { credentials: { mode: 'key', rawKey, key }, subject: agent ? { tier: 'agent', identity: key.id } : anonymous };
}

function byToken(lead: Lead | null, anonymous: RateSubject): Classified {
  return { credentials: { mode: 'token', lead }, subject: lead?.verified ? { tier: 'authed', identity: lead.id } : anonymous };
}

interface AdmissionDeps {
  keys: KeyStore;
  leads: LeadStore;
  limiter: TierLimiter;
  clientIp(request: Request): string | null;
  /** Tells the request log the tier, refused or not. */
  noteTier?: (request: Request, tier: string) => void;
  /** Puts the CORS grant on a probe answer (SVC_PROBE_CORS_ORIGINS), before any refusal, so a browser can read it. */
  cors?: (request: Request, headers: Record<string, string | number>) => void;
}

const ignore = () => {};

/**
 * Steps 1–2 of every probe route, as its access check (lib/access.ts, on the matched route): classify,
 * then take one token, before authentication or reading the body (so token guessing is throttled
 * too). Routes get the result from `admissionOf(request)`. A bulk route takes its remaining tokens
 * with `limiter.take(admission.subject, scans - 1)` (all-or-nothing) once it knows the count.
 *
 * A key or token that must be looked up in storage makes the admission a promise, which the route
 * waits for (admissionOf), and which answers its refusal there. The check itself answers with a
 * promise only for a take from shared buckets (Redis), where every admission waits anyway: otherwise
 * the telemetry path would wait in Elysia on every request (lib/access.ts).
 */
export function probeAdmission({ keys, leads, limiter, clientIp, noteTier, cors }: AdmissionDeps) {
  const admissions = new WeakMap<Request, MaybePromise<Admission>>();
  /** Step 2: one token from the classified subject's bucket, or the 429; shared buckets (Redis) answer with a promise. */
  const take = (request: Request, headers: Record<string, string | number>, ip: string | null, { credentials, subject }: Classified): MaybePromise<Admission> => {
    noteTier?.(request, subject.tier);
    const admitted = (decision: TierDecision): Admission => {
      if (!decision.allowed) throw rateLimitedError(decision);
      putRateLimitHeaders(headers, decision);
      return { credentials, subject, decision, clientIp: ip };
    };
    const taken = limiter.take(subject);
    return taken instanceof Promise ? taken.then(admitted) : admitted(taken);
  };
  return {
    admit({ request, set }: { request: Request; set: { headers: Record<string, string | number> } }): void | Promise<void> {
      cors?.(request, set.headers);
      const ip = clientIp(request);
      const classified = classifyProbe(request.headers, keys, leads, limiter.anonymous(ip));
      if (classified instanceof Promise) {
        const late = classified.then((found) => take(request, set.headers, ip, found));
        // Its refusal is answered by the route, which waits for it.
        late.catch(ignore);
        admissions.set(request, late);
        return;
      }
      const admission = take(request, set.headers, ip, classified);
      admissions.set(request, admission);
      // A take from shared buckets: the access check waits for it, and answers its refusal.
      if (admission instanceof Promise) return admission.then(() => undefined);
    },
    /** The request's admission: at once, or a promise when its key or token was looked up in storage (the refusal then rejects it). */
    admissionOf(request: Request): MaybePromise<Admission> {
      const admission = admissions.get(request);
      if (!admission) throw new Error('a probe route ran without its admission (its access rule is not probe)');
      return admission;
    },
  };
}

export type ProbeAdmission = ReturnType<typeof probeAdmission>;

const unauthorized = (code: string, detail: string) => new ApiError(401, code, detail);

/**
 * Step 4, authenticate (spec §5): verify what classification only looked up. Mode 2 verifies the
 * HMAC over `<timestamp>.<raw body bytes>` exactly as received, in constant time. Throws its
 * refusal; returns a promise only for a body hashed over several turns (see `hmacOf`).
 */
export function authenticateProbe(credentials: ProbeCredentials, headers: Headers, body: Uint8Array, now: number): void | Promise<void> {
  switch (credentials.mode) {
    case 'none':
      throw unauthorized('missing_credentials', 'send X-Probe-Token, or X-Probe-Key with X-Probe-Timestamp and X-Probe-Signature');
    case 'ambiguous':
      throw unauthorized('ambiguous_auth', 'send the headers of one authentication mode only: X-Probe-Token or X-Probe-Key');
    case 'token':
      if (!credentials.lead) throw unauthorized('invalid_token', 'the probe token is unknown, rotated or revoked');
      return;
    case 'key':
      return verifySignedRequest(credentials, headers, body, now);
  }
}

/** Body bytes hashed per event-loop turn (about a millisecond): a 16 MiB bulk body never holds the loop for its whole HMAC. */
const HMAC_SLICE_BYTES = 256 * 1024;

/**
 * HMAC-SHA256 (hex) of `prefix` then `body`. A body of one slice (a usual scan of a few KB, not
 * every scan: SVC_MAX_BODY_BYTES allows 512 KiB) is hashed at once, with no promise: each async
 * layer costs a promise and a microtask per request. A larger one is hashed in slices with a turn
 * of the event loop between them.
 */
function hmacOf(key: string, prefix: string, body: Uint8Array): string | Promise<string> {
  const hmac = hmacSha256Hasher(key).update(prefix);
  if (body.length <= HMAC_SLICE_BYTES) return hmac.update(body).digest('hex');
  return hmacInSlices(hmac, body);
}

async function hmacInSlices(hmac: Bun.CryptoHasher, body: Uint8Array): Promise<string> {
  for (let at = 0; at < body.length; at += HMAC_SLICE_BYTES) {
    if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    hmac.update(body.subarray(at, at + HMAC_SLICE_BYTES));
  }
  return hmac.digest('hex');
}

function checkSignature(expected: string, signature: string): void {
  if (!safeEqual(expected, signature)) {
    throw unauthorized('invalid_signature', 'X-Probe-Signature is not the HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the API key');
  }
}

function verifySignedRequest({ rawKey, key }: { rawKey: string | null; key: ApiKey | null }, headers: Headers, body: Uint8Array, now: number): void | Promise<void> {
  if (rawKey === null) throw unauthorized('missing_credentials', 'X-Probe-Key is required with X-Probe-Timestamp and X-Probe-Signature');
  if (!key) throw unauthorized('invalid_api_key', 'the API key is unknown, malformed or revoked');
  if (!keyHasScope(key, 'probe:scan')) throw unauthorized('insufficient_scope', 'this key needs the probe:scan or admin scope');
  const timestamp = headers.get('x-probe-timestamp');
  if (timestamp === null || !/^\d{1,15}$/.test(timestamp)) {
    throw unauthorized('invalid_timestamp', 'X-Probe-Timestamp must be the current time in epoch milliseconds');
  }
  if (Math.abs(now - Number(timestamp)) > TIMESTAMP_WINDOW_MS) {
    // Seconds are the usual mistake (`date +%s`): say so when the value read as seconds would pass.
    const looksLikeSeconds = Math.abs(now - Number(timestamp) * 1000) <= TIMESTAMP_WINDOW_MS;
    throw unauthorized(
      'timestamp_out_of_window',
      looksLikeSeconds
        ? `X-Probe-Timestamp ${timestamp} looks like seconds; send epoch milliseconds (${now} now): $(date +%s)000 in a shell, Date.now() in JavaScript`
        : `X-Probe-Timestamp is more than 5 minutes from server time (${now} epoch milliseconds now)`,
    );
  }
  const signature = (headers.get('x-probe-signature') ?? '').trim().toLowerCase();
  const expected = hmacOf(rawKey, `${timestamp}.`, body);
  if (typeof expected === 'string') return checkSignature(expected, signature);
  return expected.then((hex) => checkSignature(hex, signature));
}
