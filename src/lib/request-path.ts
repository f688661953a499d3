import { errorResponse } from './errors.ts';

/**
 * The path of a request, sliced from `request.url` without building a URL object: every global
 * hook needs it on every request. `request.url` is already normalized (dot segments resolved) by
 * the Request itself, so this is the same path the router matches.
 */
export function requestPath(request: Request): string {
  const url = request.url;
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start === -1) return '/';
  const query = url.indexOf('?', start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

/**
 * Global `onRequest` hook: 400 `malformed_path` for a path whose percent-encoding does not decode
 * (a lone `%`, `%zz`, a cut-off UTF-8 sequence), before routing hands a parameter that failed to
 * decode to a handler. Paths without `%` cost one indexOf.
 */
export function refuseMalformedPath({ request }: { request: Request }): Response | undefined {
  const path = requestPath(request);
  if (!path.includes('%')) return undefined;
  try {
    decodeURIComponent(path);
    return undefined;
  } catch {
    return errorResponse(400, 'malformed_path', 'the request path has malformed percent-encoding (each % must start a valid UTF-8 escape such as %C3%A9)');
  }
}
