import { sha256Hex } from './crypto.ts';

/** Strong validator for a representation: a quoted prefix of its SHA-256. */
export function etagOf(content: string | Uint8Array): string {
  return `"${sha256Hex(content).slice(0, 32)}"`;
}

/** True when the request's If-None-Match already names `etag` (so a 304 is the answer). */
export function matchesIfNoneMatch(request: Request, etag: string): boolean {
  const header = request.headers.get('if-none-match');
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/** 304 carrying the validators and caching headers the 200 would have had. */
export function notModified(headers: HeadersInit): Response {
  return new Response(null, { status: 304, headers });
}

/** The last Accept-Encoding value parsed and its answer: clients repeat theirs on every request. */
let lastAcceptEncoding = '';
let lastAcceptsGzip = false;

/** True when the client accepts gzip (and did not refuse it with q=0). */
export function acceptsGzip(request: Request): boolean {
  const header = request.headers.get('accept-encoding');
  if (!header) return false;
  if (header === lastAcceptEncoding) return lastAcceptsGzip;
  lastAcceptEncoding = header;
  lastAcceptsGzip = header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
  return lastAcceptsGzip;
}
