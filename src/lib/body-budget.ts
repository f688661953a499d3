import { ApiError } from './errors.ts';

/** How fast a request body must arrive, and how many body bytes may be held at once (docs/limits.md). */
export interface BodySettings {
  /** The whole body must have arrived this many milliseconds after reading began (SVC_BODY_TIMEOUT_MS). */
  timeoutMs: number;
  /** After the grace period, the body must have arrived at least this fast on average (SVC_BODY_MIN_BYTES_PER_SECOND). */
  minBytesPerSecond: number;
  /** Milliseconds a body may take before the minimum rate applies (SVC_BODY_GRACE_MS). */
  graceMs: number;
  /** Body bytes held by all requests being read at once (SVC_BODY_BUFFER_BYTES). */
  maxBufferedBytes: number;
  /** Body bytes held by the requests of one client (address or IPv6 network) at once (SVC_BODY_BUFFER_PER_CLIENT_BYTES). */
  maxBufferedPerClient: number;
}

/** How often in-flight bodies are checked against their deadline and minimum rate. */
const SWEEP_MS = 250;

/** One body being read: what it has received and holds, and why it was stopped, if it was. */
interface Upload {
  client: string;
  startedAt: number;
  received: number;
  /** Bytes counted against the caps: the declared length up front, or what has arrived when more. */
  held: number;
  /** Stops the read: cancels the stream, or fails a whole-body read (its bytes are dropped with the connection). */
  cancel(error: ApiError): void;
  stopped: ApiError | null;
}

/** 408 with the error shape; the connection is closed, since the rest of the body is never read. */
const bodyTimeout = (detail: string) => new ApiError(408, 'body_timeout', detail, { Connection: 'close' });

/**
 * The body reads of one app: each must finish within `timeoutMs` and, after `graceMs`, arrive at
 * `minBytesPerSecond` or better, else it is cancelled (its chunks released) and answered 408. The
 * bytes held by reads in flight are capped in total (503 `server_busy`) and per client (429
 * `too_many_uploads`), both with `Retry-After`: a declared length is counted before the first byte is
 * read, an undeclared one as it arrives. One timer sweeps every read in flight, so a read costs no
 * timer of its own; it runs while reads are in flight and stops at its first sweep that finds none
 * (not when the last read ends: under steady load that would start and stop it about every request).
 */
export function createBodyBudget(settings: BodySettings, clientOf: (request: Request) => string) {
  const uploads = new Set<Upload>();
  const heldByClient = new Map<string, number>();
  let held = 0;
  let sweeper: ReturnType<typeof setInterval> | null = null;

  function stop(upload: Upload, error: ApiError): void {
    upload.stopped = error;
    upload.cancel(error);
  }

  /**
   * Whether a body of `declared` bytes is judged by the minimum rate on arrival alone: any such body
   * still arriving after the grace period is below the rate whatever part of it has arrived
   * (rate × elapsed > rate × grace >= declared > received), so its progress need not be watched.
   */
  const decidedByArrival = (declared: number | null): declared is number =>
    declared !== null && declared <= (settings.minBytesPerSecond * settings.graceMs) / 1000;

  function sweep(): void {
    if (uploads.size === 0) {
      clearInterval(sweeper!);
      sweeper = null;
      return;
    }
    const now = performance.now();
    for (const upload of uploads) {
      const elapsed = now - upload.startedAt;
      if (elapsed > settings.timeoutMs) {
        stop(upload, bodyTimeout(`the request body did not arrive within ${settings.timeoutMs} ms`));
      } else if (elapsed > settings.graceMs && upload.received < (settings.minBytesPerSecond * elapsed) / 1000) {
        stop(upload, bodyTimeout(`the request body arrived slower than ${settings.minBytesPerSecond} bytes per second`));
      }
    }
  }

  /** Count `bytes` more against the caps for `upload`, or refuse (nothing counted). */
  function hold(upload: Upload, bytes: number): void {
    const ofClient = heldByClient.get(upload.client) ?? 0;
    if (ofClient + bytes > settings.maxBufferedPerClient) {
      throw new ApiError(429, 'too_many_uploads', `this client's request bodies in flight would exceed ${settings.maxBufferedPerClient} bytes; retry once they have been sent`, { 'Retry-After': '1' });
    }
    if (held + bytes > settings.maxBufferedBytes) {
      throw new ApiError(503, 'server_busy', `request bodies in flight would exceed ${settings.maxBufferedBytes} bytes; retry shortly`, { 'Retry-After': '1' });
    }
    heldByClient.set(upload.client, ofClient + bytes);
    held += bytes;
    upload.held += bytes;
  }

  function release(upload: Upload): void {
    uploads.delete(upload);
    held -= upload.held;
    const left = (heldByClient.get(upload.client) ?? 0) - upload.held;
    if (left > 0) heldByClient.set(upload.client, left);
    else heldByClient.delete(upload.client);
  }

  return {
    /** Read `request`'s body of at most `maxBytes` (`declared`: its Content-Length, if any) under the deadline and the caps. */
    async read(request: Request, maxBytes: number, declared: number | null): Promise<Uint8Array> {
      const upload: Upload = { client: clientOf(request), startedAt: performance.now(), received: 0, held: 0, cancel: () => {}, stopped: null };
      // A small declared body is read whole (native, no stream chunks through JS): see decidedByArrival.
      const whole = decidedByArrival(declared);
      const reader = whole ? null : request.body?.getReader();
      if (reader === undefined) return new Uint8Array(0);
      try {
        hold(upload, declared ?? 0);
      } catch (refusal) {
        reader?.cancel().catch(() => {});
        throw refusal;
      }
      uploads.add(upload);
      if (sweeper === null) {
        sweeper = setInterval(sweep, SWEEP_MS);
        sweeper.unref?.();
      }
      try {
        if (reader === null) return await readWhole(request, upload);
        upload.cancel = () => reader.cancel().catch(() => {});
        return await collectChunks(reader, maxBytes, (total) => {
          if (upload.stopped) throw upload.stopped;
          upload.received = total;
          if (total > upload.held) hold(upload, total - upload.held);
        }).catch((error: unknown) => {
          throw upload.stopped ?? error;
        });
      } finally {
        release(upload);
      }
    },

    /** Body bytes held by reads in flight (for /metrics). */
    get heldBytes(): number {
      return held;
    },
  };
}

export type BodyBudget = ReturnType<typeof createBodyBudget>;

/** The whole body of `request` at once, or the error `upload` is stopped with first. */
function readWhole(request: Request, upload: Upload): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    upload.cancel = reject;
    request.bytes().then(resolve, (error: unknown) => reject(upload.stopped ?? error));
  });
}

export function payloadTooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'payload_too_large', `request body exceeds the limit of ${maxBytes} bytes`);
}

/**
 * Read every chunk into one array, stopping (and cancelling the stream) as soon as the total grows
 * past `maxBytes` or `onChunk` throws; `onChunk` sees the running total after each chunk.
 */
export async function collectChunks(reader: ReadableStreamDefaultReader<Uint8Array>, maxBytes: number, onChunk?: (total: number) => void): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        onChunk?.(total);
        break;
      }
      total += value.byteLength;
      if (total > maxBytes) throw payloadTooLarge(maxBytes);
      onChunk?.(total);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
