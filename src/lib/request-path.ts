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
