import { isIP } from 'node:net';
import { errorResponse } from './errors.ts';
import { lastRequestMemo } from './last-request.ts';

/**
 * The path of a request as sent, sliced from `request.url` without building a URL object, for what
 * svc says about a request it could not route (a 404's detail, the malformed-path check). Nothing
 * decides access, limits or logging from it: those follow the route the router matched
 * (lib/access.ts). `request.url` is already normalized (dot segments resolved) by the Request itself.
 */
export const requestPath = lastRequestMemo((request: Request): string => {
  // Kept for the last request (lib/last-request.ts): the request gate and a 404 may both ask.
  const url = request.url;
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start === -1) return '/';
  const query = url.indexOf('?', start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
});

/** A DNS-style name (letters, digits, `_`, inner `-`; labels of 1–63), an IPv4 address, or a bracketed IPv6 address; then an optional port. */
const AUTHORITY = /^(?:\[([0-9a-f:.]{2,45})\]|((?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.?))(?::(\d{1,5}))?$/i;

/** The scheme, host and `/` of the last request whose host was valid: nearly every request repeats it. */
let lastValidOrigin = '';
/** The last Host header value found valid. */
let lastValidHost = '';

/** Whether `authority` is a valid `host[:port]`: a DNS-style name, an IPv4 address or a bracketed IPv6 address, and a port up to 65535. */
function isValidAuthority(authority: string): boolean {
  const parts = AUTHORITY.exec(authority);
  if (parts === null) return false;
  const [, ipv6, name, port] = parts;
  if (ipv6 !== undefined && isIP(ipv6) !== 6) return false;
  if (name !== undefined && name.length > 254) return false;
  return port === undefined || Number(port) <= 65_535;
}

/**
 * Whether the request's Host (as the request's URL carries it) is a valid `host[:port]`. Bun builds
 * `request.url` from the Host header, and leaves the URL relative when the header is not a host at
 * all (`a/b`, `a b`, empty); anything else odd (`..`, `a:b:c`, `x%2fy`, a port over 65535) is
 * refused here. A request repeating the last valid origin costs one `startsWith`.
 */
export function hasValidHost(request: Request): boolean {
  const url = request.url;
  if (lastValidOrigin !== '' && url.startsWith(lastValidOrigin)) return true;
  const schemeEnd = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1;
  if (schemeEnd === -1) return false;
  const pathStart = url.indexOf('/', schemeEnd);
  if (!isValidAuthority(url.slice(schemeEnd, pathStart === -1 ? url.length : pathStart))) return false;
  if (pathStart !== -1) lastValidOrigin = url.slice(0, pathStart + 1);
  return true;
}

/**
 * The same rule for a request the server answers ahead of the app (lib/hot-route.ts), read from its
 * Host header: those routes never build the request's URL (a few µs), and a header lookup repeating
 * the last valid value costs a string comparison.
 */
export function hasValidHostHeader(request: Request): boolean {
  const host = request.headers.get('host');
  if (host === null) return false;
  if (host === lastValidHost) return true;
  if (!isValidAuthority(host)) return false;
  lastValidHost = host;
  return true;
}

/**
 * Request gate check (src/app.ts), before routing: 400 `invalid_host` for a Host that is not a
 * valid `host[:port]`, and 400 `malformed_path` for a path whose percent-encoding does not decode (a
 * lone `%`, `%zz`, a cut-off UTF-8 sequence) or decodes to a NUL character (`%00`), before routing
 * hands such a parameter to a handler: no path of svc holds a NUL, and PostgreSQL's text refuses one
 * (a lookup by it would fail there, where SQLite finds nothing). svc's own links come from its base
 * URL, never from the Host.
 */
export function refuseMalformedRequest({ request }: { request: Request }): Response | undefined {
  if (!hasValidHost(request)) return errorResponse(400, 'invalid_host', 'the Host header must be a host name or IP address with an optional port (host[:port])');
  const path = requestPath(request);
  if (!path.includes('%') || decodes(path)) return undefined;
  return errorResponse(400, 'malformed_path', 'the request path has malformed percent-encoding (each % must start a valid UTF-8 escape such as %C3%A9, and none may encode NUL: %00)');
}

/** Whether a path's percent-escapes decode (not a lone `%`, `%zz`, cut-off UTF-8), to no NUL character. */
function decodes(path: string): boolean {
  try {
    return !decodeURIComponent(path).includes('\u0000');
  } catch {
    return false;
  }
}
