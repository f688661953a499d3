// @svc/probe: send page scans to svc. Web Crypto + fetch only (Node >= 18, Bun, Deno, browser
// extension workers, CI runners), no dependencies. Kept to erasable TypeScript so Deno, Bun and
// Node's type stripping can run this file as it is; `npm run build` emits dist/index.js + .d.ts.

export type Platform = 'platform-a' | 'platform-b' | 'platform-c' | 'magento' | 'custom' | 'unknown';
export type PageType = 'product' | 'collection' | 'category' | 'page' | 'home' | 'cart' | 'checkout' | 'unknown';
export type Grade = 'A' | 'B' | 'C' | 'D' | 'E' | 'F';
export type PresenceKey = 'title' | 'description' | 'jsonLd' | 'openGraph' | 'h1' | 'canonical' | 'robots';

/**
 * The raw signals a scanner extracted from the page. Known keys are type-checked by svc (text
 * values at most 2048 characters); other keys are stored as sent.
 */
export interface Signals {
  title?: { value?: string; length?: number };
  description?: { value?: string; length?: number };
  canonical?: { value?: string };
  /** Robots directive list, at most 512 characters. */
  robots?: string;
  /** Language code, at most 35 characters. */
  lang?: string;
  headings?: { h1?: string[]; h2?: string[] };
  /** OpenGraph property name (`og:title`, ...) to its content. */
  openGraph?: Record<string, string>;
  /** JSON-LD objects found on the page. */
  jsonLd?: unknown[];
  [signal: string]: unknown;
}

/**
 * One page scan: the body of POST /api/v1/probe/telemetry and an item of scan-bulk. Only
 * `hostname` and `signals` are required; a field that breaks its rule is not refused but kept
 * aside (in the scan's `data`), as are fields svc does not know.
 */
export interface TelemetryPayload {
  /** Bare host name: no scheme, path or port. */
  hostname: string;
  signals: Signals;
  /** Absolute http(s) URL, at most 2048 characters; svc drops query and fragment. Default `https://<hostname>/`. */
  url?: string;
  /**
   * ISO-8601 with a time zone, such as `new Date().toISOString()`. Default: for `send`, the server's
   * time; `sendBulk` gives a scan without one the time it is first sent (on svc's clock as far as
   * its answers tell), so that a batch sent again is recognised and not stored twice.
   */
  scannedAt?: string;
  /** `confidence` is a fraction from 0 to 1. */
  platform?: { platform?: Platform; confidence?: number };
  pageType?: PageType;
  /** Whether the page carries svc's embed or schema fingerprint; `version` at most 64 characters. */
  svc?: { detected?: boolean; version?: string };
  signalPresence?: { [K in PresenceKey]?: boolean };
  /** `percentage` 0 to 100; the per-signal scores are integers from -1000 to 1000. */
  quality?: { grade?: Grade; percentage?: number; title?: number; description?: number; keywords?: number; jsonLd?: number; openGraph?: number };
  /** ISO 3166-1 alpha-2 code. Default: svc's GeoIP lookup of the sender's address. */
  country?: string;
  /** Free-form segment, 1 to 64 characters. */
  vertical?: string;
  [field: string]: unknown;
}

/** What svc said about the scans of one `sendBulk` call; `index` is the scan's place in the array given. */
export interface ProbeResult {
  inserted: number;
  /** Duplicates of a stored (url, scannedAt) pair. */
  skipped: number;
  errors: { index: number; error: string; detail: string }[];
}

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  /** Milliseconds until the retry: the server's Retry-After, else exponential backoff. */
  delay: number;
  error: ProbeError;
}

export type ProbeClientOptions = ({ token: string; key?: undefined } | { key: string; token?: undefined }) & {
  /** Where svc runs, such as `https://svc.example.com`. */
  baseUrl: string;
  /** Retries of one request after a 429, a 5xx, a network error or a timeout. Default 5. */
  retries?: number;
  /** Longest wait before a retry, in ms; a Retry-After above it fails at once. Default 120000 (a full rate-limit window and then some). */
  maxDelay?: number;
  /** Per-request timeout in ms. Default 30000. */
  timeout?: number;
  /**
   * Most scans per bulk request. Default 1000 (svc's most). Fewer are sent when svc says that the
   * credentials' rate tier takes fewer a minute (its `RateLimit-Policy`, or a batch it refused as
   * too large for the tier, which is then sent again in smaller ones).
   */
  maxBulkScans?: number;
  /** Bulk request body limit in bytes. Default 16 MiB. */
  maxBulkBytes?: number;
  /** Limit of one scan in bytes (svc's SVC_MAX_BODY_BYTES); a larger bulk item is reported, not sent. Default 524288. */
  maxScanBytes?: number;
  /** Milliseconds since the epoch for X-Probe-Timestamp and the `scannedAt` that `sendBulk` gives. Default Date.now. */
  now?: () => number;
  /** Called before each retry, e.g. to log it; throwing from it stops the retries with that error. */
  onRetry?: (retry: RetryInfo) => void;
  /** Called when `sendBulk` sends fewer scans per request than before, because of what svc said about the credentials' tier. */
  onBatchSize?: (change: BatchSizeChange) => void;
};

export interface BatchSizeChange {
  /** Scans per bulk request from now on. */
  size: number;
  /** The rate tier svc named (`anonymous`, `authed`, `agent`), if it named one. */
  tier?: string;
}

export interface ProbeClient {
  /** Send one scan; resolves once svc has committed it. */
  send(scan: TelemetryPayload): Promise<void>;
  /** Send any number of scans in as many bulk requests as the limits need, one after the other. */
  sendBulk(scans: TelemetryPayload[]): Promise<ProbeResult>;
}

/**
 * A refusal by svc, carrying its `{error, detail}` (and the rest of its body), or a failure to
 * reach it (`status` 0, `error` `network_error` or `timeout`).
 */
export class ProbeError extends Error {
  /** HTTP status, or 0 when no answer came. */
  declare status: number;
  /** svc's machine code, such as `rate_limited`, `invalid_signature` or `timestamp_out_of_window`. */
  declare error: string;
  declare detail: string;
  /** svc's whole error body (a 429 also has `tier`, `limit` and `retryAfter`). */
  declare body: { error: string; detail: string; [extra: string]: unknown };
  /** For `timestamp_out_of_window`: server time minus the timestamp sent (from the Date header, to about 1 s). */
  declare skew?: number;
  /** For a failed `sendBulk`: what the requests before the failing one stored. */
  declare result?: ProbeResult;
  /**
   * For a failed `sendBulk`: the indexes of the scans it did not store, in order (the failing
   * request's and every later one's). After a refusal svc stored none of them; after no answer
   * (`status` 0) or a 5xx, the failing request's may have been: sending the same objects again is
   * safe, as `sendBulk` gave each a `scannedAt` (svc skips a stored url and scannedAt).
   */
  declare unsent?: number[];

  constructor(status: number, body: ProbeError['body'], skew?: number) {
    super(body.error + ': ' + body.detail + (skew == null ? '' : ` (this clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'behind' : 'ahead of'} svc)`));
    this.name = 'ProbeError';
    this.status = status;
    this.error = body.error;
    this.detail = body.detail;
    this.body = body;
    this.skew = skew;
  }
}

const encoder = new TextEncoder();
/** Bytes of the envelope `{"scans":[` + `]}` around the comma-separated items. */
const ENVELOPE = 12;

export function createProbeClient(options: ProbeClientOptions): ProbeClient {
  const { token, key, retries = 5, maxDelay = 120_000, timeout = 30_000, maxBulkScans = 1000, maxBulkBytes = 16 << 20, maxScanBytes = 524_288, now = Date.now, onRetry, onBatchSize } = options;
  if (!token == !key) throw new TypeError('createProbeClient needs exactly one of token and key');
  const endpoint = options.baseUrl.replace(/\/+$/, '') + '/api/v1/probe/';
  let hmacKey: Promise<CryptoKey> | undefined;
  /** Scans a minute the credentials' tier takes, as svc's last answer said (`RateLimit-Policy: "<tier>";q=<n>;w=60`). */
  let quota = Infinity;
  let tier: string | undefined;
  /** svc's clock minus ours, from the last answer's Date header (cut to the second: svc was 0–999 ms past it). */
  let offset = 0;

  async function signature(timestamp: string, body: Uint8Array): Promise<string> {
    hmacKey ??= crypto.subtle.importKey('raw', encoder.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const prefix = encoder.encode(timestamp + '.');
    const signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix);
    signed.set(body, prefix.length);
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey, signed));
    return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
  }

  /** POST `body` (signed afresh on every attempt), retrying what may pass later; resolves with the 2xx answer. */
  async function post(path: string, body: string, scans: number): Promise<Response> {
    const bytes = encoder.encode(body);
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      let timestamp = 0;
      if (key) {
        timestamp = Math.floor(now());
        headers['x-probe-key'] = key;
        headers['x-probe-timestamp'] = '' + timestamp;
        headers['x-probe-signature'] = await signature('' + timestamp, bytes);
      } else headers['x-probe-token'] = token!;
      let response: Response | undefined;
      let failure: ProbeError;
      try {
        response = await fetch(endpoint + path, { method: 'POST', headers, body: bytes, signal: AbortSignal.timeout(timeout) });
        const policy = /^"(\w+)";q=(\d+)/.exec(response.headers.get('ratelimit-policy')!);
        if (policy) {
          tier = policy[1];
          quota = +policy[2]!;
        }
        const date = Date.parse(response.headers.get('date')!);
        if (date) offset = date + 500 - now();
        if (response.ok) return response;
        failure = await refusal(response, timestamp);
      } catch (error) {
        const name = (error as Error).name;
        failure = new ProbeError(0, { error: name == 'TimeoutError' ? 'timeout' : 'network_error', detail: '' + ((error as Error).message || error) });
      }
      const status = response?.status ?? 0;
      const limit = failure.body.limit as number;
      // A batch above the tier's per-minute limit can never pass: no point in waiting for it.
      const retryable = (status == 429 && !(limit < scans)) || status >= 500 || !response;
      const retryAfter = response?.headers.get('retry-after');
      let delay = retryAfter
        ? Math.max(0, +retryAfter >= 0 ? +retryAfter * 1000 : Date.parse(retryAfter) - Date.now())
        : Math.min(maxDelay, (1 + Math.random()) * 250 * 2 ** attempt);
      // svc takes a bulk request's first token before it reads the body, on every attempt; a 429 at
      // that point cannot know the batch, so its Retry-After covers one token: wait for one more,
      // which saves a second refusal (a 429 for the batch itself covers the whole batch).
      if (status == 429 && scans > 1 && limit > 0) delay += 60_000 / limit;
      if (!retryable || attempt >= retries || !(delay <= maxDelay)) throw failure;
      onRetry?.({ attempt: attempt + 1, delay, error: failure });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  return {
    async send(scan) {
      await post('telemetry', JSON.stringify(scan), 1);
    },

    async sendBulk(scans) {
      const result: ProbeResult = { inserted: 0, skipped: 0, errors: [] };
      // Scans are taken in order: from `back` (sent back, last first), else the next at `at`.
      // `again`: scans whose scannedAt was given anew (at most once each).
      const back: number[] = [];
      const again = new Set<number>();
      let at = 0;
      let size = maxBulkScans;
      const shrink = (to: number) => {
        if (to < size) onBatchSize?.({ size: (size = to), tier });
      };
      const stamped = (index: number) => {
        const scan = scans[index];
        return typeof scan == 'object' && scan && scan.scannedAt === undefined;
      };
      for (;;) {
        shrink(quota);
        const batch: number[] = [];
        const items: string[] = [];
        let bytes = ENVELOPE;
        while (batch.length < size && (back.length || at < scans.length)) {
          const index = back.length ? back.pop()! : at++;
          // Its retries send these same bytes, so svc skips a scan an unanswered attempt stored.
          const json = JSON.stringify(stamped(index) ? { ...scans[index], scannedAt: new Date(now() + offset).toISOString() } : scans[index]) ?? 'null';
          const length = encoder.encode(json).length;
          if (length > maxScanBytes) {
            result.errors.push({ index, error: 'payload_too_large', detail: `the scan is ${length} bytes; the limit of one scan is ${maxScanBytes} bytes` });
          } else if (batch.length && bytes + length + 1 > maxBulkBytes) {
            back.push(index);
            break;
          } else {
            batch.push(index);
            items.push(json);
            bytes += length + 1;
          }
        }
        if (!batch.length) break;
        let answer: ProbeResult;
        try {
          answer = await (await post('scan-bulk', `{"scans":[${items}]}`, batch.length)).json();
        } catch (error) {
          back.push(...batch.reverse());
          const limit = (error as ProbeError).body?.limit as number;
          // A refusal naming a limit below the batch (400 batch_exceeds_limit, or 429 from an older
          // svc or the anonymous tier's shared ceiling): svc stored none of it; it goes again in
          // batches of that size.
          if (limit < batch.length) {
            shrink(limit);
            continue;
          }
          (error as ProbeError).result = result;
          (error as ProbeError).unsent = back.concat(Array.from({ length: scans.length - at }, (_, n) => at + n)).sort((a, b) => a - b);
          throw error;
        }
        result.inserted += answer.inserted;
        result.skipped += answer.skipped;
        for (const item of answer.errors) {
          const index = batch[item.index]!;
          // The scannedAt given here ran ahead of svc's clock (no answer had told its offset yet): given again, once.
          if (item.error == 'scanned_at_in_future' && stamped(index) && !again.has(index)) {
            again.add(index);
            back.push(index);
          } else result.errors.push({ ...item, index });
        }
      }
      result.errors.sort((a, b) => a.index - b.index);
      return result;
    },
  };
}

/** The ProbeError of a non-2xx answer; a timestamp refusal also measures the clock skew. */
async function refusal(response: Response, timestamp: number): Promise<ProbeError> {
  const text = await response.text();
  let body: ProbeError['body'];
  try {
    body = JSON.parse(text);
    if (typeof body.error != 'string') throw 0;
  } catch {
    body = { error: 'http_' + response.status, detail: text.slice(0, 200) || response.statusText };
  }
  // The Date header is cut to the second: the server's clock was 0–999 ms past it.
  const date = Date.parse(response.headers.get('date')!) + 500;
  return new ProbeError(response.status, body, body.error == 'timestamp_out_of_window' && date ? date - timestamp : undefined);
}
