import { errorResponse } from './errors.ts';
import { lastRequestMemo } from './last-request.ts';

/**
 * The path of a request, sliced from `request.url` without building a URL object: the request gate's
 * checks need it on every request. `request.url` is already normalized (dot segments resolved) by
 * the Request itself, so this is the same path the router matches.
 */
export const requestPath = lastRequestMemo((request: Request): string => {
  // Kept for the last request (lib/last-request.ts): the request gate asks twice, for the
  // malformed-path check and then for the canonical path.
  const url = request.url;
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start === -1) return '/';
  const query = url.indexOf('?', start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
});

/** Anything that makes a path differ from its canonical form: an escape, a capital, `//`, a trailing `/`. */
const NOT_CANONICAL = /%|[A-Z]|\/\/|.\/$/;

/**
 * The path that rate limits and guards match on: percent-escapes decoded, lowercased, runs of `/`
 * collapsed and a trailing `/` dropped, so `/API/v1//public/%6Ceads/` is limited like
 * `/api/v1/public/leads`. The router is laxer than the raw path (it routes a trailing slash), so a
 * guard matched on the raw path could be walked around; one matched on this form cannot, and at worst
 * also guards a spelling that the router answers 404. A canonical path (nearly every request) is
 * returned as is after one regular-expression test.
 */
export const canonicalPath = lastRequestMemo((request: Request): string => {
  // Kept for the last request (lib/last-request.ts): the app's request gate asks once per check.
  const path = requestPath(request);
  if (!NOT_CANONICAL.test(path)) return path;
  // Malformed escapes: match on the path as sent (the router cannot route it to a guarded route either).
  const collapsed = (decodedPath(path) ?? path).toLowerCase().replace(/\/{2,}/g, '/');
  return collapsed.length > 1 && collapsed.endsWith('/') ? collapsed.slice(0, -1) : collapsed;
});

/** Whether a canonical path lies under `prefix` (which ends in `/`), or names the prefix itself. */
export function isUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) || (path.length === prefix.length - 1 && prefix.startsWith(path));
}

/**
 * Request gate check (src/app.ts): 400 `malformed_path` for a path whose percent-encoding does not decode
 * (a lone `%`, `%zz`, a cut-off UTF-8 sequence), before routing hands a parameter that failed to
 * decode to a handler. Paths without `%` cost one indexOf.
 */
export function refuseMalformedPath({ request }: { request: Request }): Response | undefined {
  const path = requestPath(request);
  if (!path.includes('%') || decodedPath(path) !== null) return undefined;
  return errorResponse(400, 'malformed_path', 'the request path has malformed percent-encoding (each % must start a valid UTF-8 escape such as %C3%A9)');
}

/** A path with its percent-escapes decoded, or null when they do not decode (a lone `%`, `%zz`, cut-off UTF-8). */
function decodedPath(path: string): string | null {
  try {
    return decodeURIComponent(path);
  } catch {
    return null;
  }
}
