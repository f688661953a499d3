/**
 * Same-origin checks for svc's own pages (the console and its widget preview). "Same origin" is the
 * origin svc is configured to be reached at (the base URL) or the origin the request itself was sent
 * to (its Host), so a console opened as http://localhost:3000 works as well as one opened by its
 * base URL. A cross-site page cannot satisfy either: the browser names the page's own origin.
 */
export function ownOrigins(request: Request, baseUrl: string): string[] {
  return [new URL(baseUrl).origin, new URL(request.url).origin];
}

/** The origin of an Origin or Referer header value, or null (`null`, garbage, non-http). */
export function originOf(value: string | null): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}

export const isSafeMethod = (method: string) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';

/**
 * Why a request may not act as svc's own page, or null when it may. State-changing methods must
 * name a same-origin `Origin`; safe ones are refused only when the browser says they are
 * cross-origin (an `Origin` or `Sec-Fetch-Site` naming another site).
 */
export function crossOriginProblem(request: Request, baseUrl: string): string | null {
  const origin = request.headers.get('origin');
  const fetchSite = request.headers.get('sec-fetch-site');
  if (fetchSite !== null && fetchSite !== 'same-origin' && fetchSite !== 'none') return `the browser marks this request ${fetchSite}`;
  if (origin === null) return isSafeMethod(request.method) ? null : 'a state-changing request must carry a same-origin Origin header';
  const own = ownOrigins(request, baseUrl);
  return own.includes(originOf(origin) ?? '') ? null : `Origin ${JSON.stringify(origin)} is not this server's origin`;
}

/**
 * True when a page of svc itself made this request: the browser says so (`Sec-Fetch-Site:
 * same-origin`), or its Origin (else Referer) is one of svc's own origins.
 */
export function fromOwnPage(request: Request, baseUrl: string): boolean {
  if (request.headers.get('sec-fetch-site') === 'same-origin') return true;
  const origin = request.headers.get('origin');
  const source = originOf(origin !== null ? origin : request.headers.get('referer'));
  return source !== null && ownOrigins(request, baseUrl).includes(source);
}
