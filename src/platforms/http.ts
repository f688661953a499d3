import { OutOfTime, Stopped, abortReason } from '../lib/abort.ts';
import { collectChunks } from '../lib/body-budget.ts';
import { createEgress, TargetRefused, type Egress } from './egress.ts';

/**
 * An outbound platform API call failed (network, timeout, or an unexpected status). The message
 * names the call and the kind of failure, never a secret and never text the platform sent.
 */
export class PlatformApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'PlatformApiError';
  }
}

/**
 * The platform refused or would refuse the call for its rate limit: not a failure, ask again later.
 * `waitMs` is what the platform's throttle state, quota headers or Retry-After say it takes (capped
 * at MAX_PLATFORM_WAIT_MS); null when it said nothing, and the caller backs off by its own count of
 * attempts. `refused`: the platform answered a call with its refusal (what a bound on retries
 * counts); false when svc held the call back itself, waiting for what an earlier answer said.
 */
export class PlatformThrottled extends PlatformApiError {
  constructor(
    message: string,
    readonly waitMs: number | null,
    readonly refused = true,
  ) {
    super(message, 429);
    this.name = 'PlatformThrottled';
  }
}

/**
 * The platform's answer breaks its own rules: a body over MAX_RESPONSE_BYTES, more items than asked
 * for, a next page that does not advance. Asking again would get the same: the work it was for
 * (a sync pass) fails at once instead of being retried.
 */
export class PlatformProtocolError extends PlatformApiError {
  constructor(message: string) {
    super(message);
    this.name = 'PlatformProtocolError';
  }
}

export const DEFAULT_API_TIMEOUT_MS = 10_000;
/** The most bytes of one platform answer: read as it arrives and refused past this, never held whole first. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** The longest wait svc takes from a platform (a Retry-After, a quota reset, a bucket refill): a longer one is read as this. */
export const MAX_PLATFORM_WAIT_MS = 15 * 60_000;

/** A wait a platform asked for, in whole milliseconds, at least 1 and at most MAX_PLATFORM_WAIT_MS. */
export const platformWaitMs = (ms: number): number => Math.min(MAX_PLATFORM_WAIT_MS, Math.max(1, Math.ceil(ms)));

/** How often, and how far apart, a client asks again within one call when the platform says nothing of when (exponential, with jitter). */
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
  attempts: number;
}
export const DEFAULT_RETRY: RetryPolicy = { baseMs: 1_000, maxMs: 60_000, attempts: 5 };

/**
 * How a call reaches its target (`egress`, which checks and pins a target a store supplied; an
 * operator-set target is trusted) and what stops it early (`signal`: the job's time budget, the
 * server's shutdown).
 */
export interface CallRoute {
  egress: Egress;
  operatorSet: boolean;
  signal?: AbortSignal | undefined;
}

/** For calls given no route: every target is treated as store-supplied, and private ones are refused (safe by default). */
const UNTRUSTED: CallRoute = { egress: createEgress({ allowPrivate: false }), operatorSet: false };

/**
 * What holds an outbound call back for a platform's rate limit, one entry per API that is being
 * waited on (removed once the time has passed): no list call is sent to that API before the time
 * it named, whichever sync phase asks. Kept for the process's life. Timed from the answer's receipt
 * on the monotonic clock: Date.now() is cut to whole milliseconds (the wait could end up to 1 ms
 * early) and can step.
 */
export function createHoldoffs() {
  const until = new Map<string, number>();
  return {
    /** Throws PlatformThrottled (not refused: svc holds the call back) while `api` is held off. */
    check(api: string): void {
      const at = until.get(api);
      if (at === undefined) return;
      const waitMs = Math.ceil(at - performance.now());
      if (waitMs > 0) throw new PlatformThrottled('waiting for the API rate limit to reset', waitMs, false);
      until.delete(api);
    },
    hold(api: string, waitMs: number): void {
      until.set(api, performance.now() + waitMs);
    },
  };
}

/** A list from a platform answer, refused when it holds more items than were asked for. */
export function atMost<T>(items: T[], asked: number, what: string): T[] {
  if (items.length > asked) throw new PlatformProtocolError(`${what}: answered ${items.length} items, more than the ${asked} asked for`);
  return items;
}

const TLS_FAILURE = /TLS|SSL|CERT|EPROTO|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HANDSHAKE/i;
const NOT_RESOLVED = /^(ENOTFOUND|EAI_|DNS)/;

/**
 * The kind of a connection failure, as the operator sees it: never the remote end's own text. For
 * a store-supplied target, refused, reset, TLS and protocol failures read alike: an open port that
 * answers something else and a closed port must not be told apart (svc is no port scanner).
 */
function connectFailure(error: unknown, operatorSet: boolean): string {
  const code = String((error as { code?: unknown })?.code ?? '');
  if (NOT_RESOLVED.test(code)) return 'could not resolve the host name';
  if (!operatorSet) return 'could not connect (no HTTP answer: refused, reset, or a TLS or protocol failure)';
  return TLS_FAILURE.test(code) ? 'TLS failed' : 'could not connect';
}

/** The body's bytes, read as they arrive; a PlatformProtocolError (and the rest left unread) once they pass `maxBytes`. */
async function boundedBody(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const tooLarge = () => new PlatformProtocolError(`${what}: answered a body of more than ${maxBytes} bytes`);
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  return collectChunks(response.body.getReader(), Infinity, (length) => {
    if (length > maxBytes) throw tooLarge();
  });
}

/**
 * One JSON call to a platform API: a hard timeout over the whole call (the body included), a body
 * of at most MAX_RESPONSE_BYTES read as it arrives, no redirect followed, and the target reached through
 * `via` (a store-supplied one checked and pinned). Returns the status and parsed body (null when it
 * is not JSON); the caller decides which statuses are answers (`expect`), others become a
 * PlatformApiError naming the status. A stop by `via.signal` rejects with its reason: a Stopped one
 * as is (the shutdown, the operator stopping the store's work), a spent time budget as a PlatformApiError.
 */
export async function callJson(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown },
  options: { timeoutMs: number; expect?: number[]; via?: CallRoute },
): Promise<{ status: number; body: any; headers: Headers }> {
  const via = options.via ?? UNTRUSTED;
  const what = `${init.method ?? 'GET'} ${new URL(url).pathname}`;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = via.signal ? AbortSignal.any([timeout, via.signal]) : timeout;
  const stopped = (error: unknown): Error => {
    if (via.signal?.aborted) {
      const reason = abortReason(via.signal);
      return reason instanceof Stopped ? reason : new PlatformApiError(`${what}: ${reason instanceof OutOfTime ? reason.message : 'stopped'}`);
    }
    if (error instanceof PlatformApiError) return error;
    if (timeout.aborted) return new PlatformApiError(`${what}: timed out after ${options.timeoutMs} ms`);
    if (error instanceof TargetRefused) return new PlatformApiError(`${what}: refused: ${error.message} (svc connects to public addresses only, unless SVC_ALLOW_PRIVATE_TARGETS=1)`);
    return new PlatformApiError(`${what}: ${connectFailure(error, via.operatorSet)}`);
  };
  let response: Response;
  try {
    response = await via.egress.fetch(
      url,
      {
        method: init.method ?? 'GET',
        headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal,
        redirect: 'manual',
      },
      via.operatorSet,
    );
  } catch (error) {
    throw stopped(error);
  }
  const expected = options.expect ?? [200, 201];
  if (!expected.includes(response.status)) {
    await response.body?.cancel().catch(() => {});
    const redirect = response.status >= 300 && response.status < 400 ? ' (a redirect: svc follows none)' : '';
    throw new PlatformApiError(`${what} answered ${response.status}${redirect}`, response.status);
  }
  let bytes: Uint8Array;
  try {
    bytes = await boundedBody(response, MAX_RESPONSE_BYTES, what);
  } catch (error) {
    throw stopped(error);
  }
  let body: unknown = null;
  try {
    body = bytes.byteLength ? JSON.parse(new TextDecoder().decode(bytes)) : null;
  } catch {
    body = null;
  }
  return { status: response.status, body, headers: response.headers };
}

/** ISO-8601 time (platform C's `date_modified_gmt` has no zone: it is UTC) -> epoch ms, or null. */
export function isoToMillis(value: unknown, assumeUtc = false): number | null {
  if (typeof value !== 'string' || value === '') return null;
  const zoned = assumeUtc && !/(Z|[+-]\d\d:?\d\d)$/.test(value) ? `${value}Z` : value;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? ms : null;
}

/** A platform id (number or numeric string) as a string, or null when absent/invalid. */
export function idOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return value;
  return null;
}

export function stringOrNull(value: unknown, max = 2048): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value.slice(0, max) : null;
}
