import { ApiError } from './errors.ts';
import { collectChunks, payloadTooLarge, type BodyBudget } from './body-budget.ts';
import { checkJsonStructure, checkReservedKeys, JSON_LIMITS, type JsonLimits } from './json-limits.ts';

export { payloadTooLarge };

/** The body budget each request's reads count against (set by the app for every request that may carry a body). */
const budgets = new WeakMap<Request, BodyBudget>();

/** Make `request`'s body reads count against `budget`: its deadline, minimum rate and byte caps. */
export function useBodyBudget(request: Request, budget: BodyBudget): void {
  budgets.set(request, budget);
}

/**
 * Read a request body as raw bytes, stopping as soon as it grows past `maxBytes`, so a chunked
 * upload without Content-Length can never make us buffer more than the limit. Under the app's body
 * budget (lib/body-budget.ts) the read also has a deadline and a minimum rate (else 408) and counts
 * against the caps on body bytes in flight (503 / 429).
 */
export function readBodyLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  // Not async: an async function returning the read's promise would add a promise and microtask
  // hops to every request; refusals are rejections all the same.
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) return Promise.reject(payloadTooLarge(maxBytes));
  const budget = budgets.get(request);
  if (budget) return budget.read(request, maxBytes, declared !== null && /^\d+$/.test(declared) ? Number(declared) : null);
  const body = request.body;
  return body ? collectChunks(body.getReader(), maxBytes) : Promise.resolve(new Uint8Array(0));
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Parse raw body bytes as JSON: 400 naming the limit past `limits`, 400 `malformed_json` for invalid
 * UTF-8 or JSON, 400 `reserved_key`. `limits` null: the caller already scanned these bytes (a bulk
 * item, checked with its whole body), and says with `keysCleared` whether that scan cleared their keys.
 */
export function parseJsonBytes(bytes: Uint8Array, limits: JsonLimits | null = JSON_LIMITS, what = 'request body', keysCleared = false): unknown {
  const cleared = limits !== null ? checkJsonStructure(bytes, limits) : keysCleared;
  let text: string;
  let value: unknown;
  try {
    text = decoder.decode(bytes);
    value = JSON.parse(text);
  } catch (cause) {
    throw new ApiError(400, 'malformed_json', `${what} is not valid JSON: ${(cause as Error).message}`);
  }
  if (!cleared) checkReservedKeys(text, value);
  return value;
}

/**
 * The app's parse hook for routes with JSON bodies: `jsonBodyParser`, run once the caller is admitted
 * to the matched route (lib/access.ts `beforeBody`). Each capability with JSON bodies registers it
 * with `.onParse`.
 */
export type JsonBodyHook = (context: { request: Request; route: string; set: { headers: Record<string, string | number> }; contentType: string }) => Promise<unknown>;

/**
 * Elysia `onParse` handler for JSON APIs: bounded read, strict UTF-8 and JSON, 415 for other media
 * types. The app wraps it (JsonBodyHook) for each capability's instance (never globally: a global
 * parse hook makes Elysia consume the body of the raw-body routes that verify signatures).
 */
export function jsonBodyParser(maxBytes: number) {
  return async ({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> => {
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    if (type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
      throw new ApiError(415, 'unsupported_media_type', `expected Content-Type: application/json, got ${JSON.stringify(type)}`);
    }
    const bytes = await readBodyLimited(request, maxBytes);
    // Elysia parses for every route of an instance that has a parse hook; bodiless calls
    // (DELETE, action POSTs) get an empty object, and schemas still reject it where a body is required.
    return bytes.byteLength === 0 ? {} : parseJsonBytes(bytes);
  };
}
