/** An outbound platform API call failed (network, timeout, or an unexpected status). Never carries a secret. */
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
 * The platform refused or would refuse the call for its rate limit: not a failure, ask again after
 * `waitMs` (what the platform's throttle state or quota headers say it takes to refill).
 */
export class PlatformThrottled extends PlatformApiError {
  constructor(
    message: string,
    readonly waitMs: number,
  ) {
    super(message, 429);
    this.name = 'PlatformThrottled';
  }
}

export const DEFAULT_API_TIMEOUT_MS = 10_000;

/**
 * What a platform's rate limit said about each of its APIs (a spent quota window, a Retry-After):
 * no list call is sent to that API before the time it named, whichever sync phase asks. Kept for
 * the process's life, one entry per API that is being waited on (removed once the time has passed).
 * Timed from the answer's receipt on the monotonic clock: Date.now() is cut to whole milliseconds
 * (the wait could end up to 1 ms early) and can step.
 */
export function createHoldoffs() {
  const until = new Map<string, number>();
  return {
    /** Throws PlatformThrottled while `api` is held off. */
    check(api: string): void {
      const at = until.get(api);
      if (at === undefined) return;
      const waitMs = Math.ceil(at - performance.now());
      if (waitMs > 0) throw new PlatformThrottled('waiting for the API rate limit to reset', waitMs);
      until.delete(api);
    },
    hold(api: string, waitMs: number): void {
      until.set(api, performance.now() + waitMs);
    },
  };
}

/**
 * One JSON call to a platform API with a hard timeout. Returns the status and parsed body; the
 * caller decides which statuses are errors (`expect`), others become a PlatformApiError.
 */
export async function callJson(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown },
  options: { timeoutMs: number; expect?: number[] },
): Promise<{ status: number; body: any; headers: Headers }> {
  const what = `${init.method ?? 'GET'} ${new URL(url).pathname}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(options.timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `timed out after ${options.timeoutMs} ms` : (error as Error).message;
    throw new PlatformApiError(`${what}: ${reason}`);
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const expected = options.expect ?? [200, 201];
  if (!expected.includes(response.status)) throw new PlatformApiError(`${what} answered ${response.status}`, response.status);
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
