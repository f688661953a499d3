import { listenUrl, type Config } from '../config.ts';

/**
 * The names a loopback listen address is reached by from a browser on the same machine: svc on
 * 127.0.0.1:3000 is also http://localhost:3000 (and on `localhost`, both loopback addresses).
 */
const LOOPBACK_NAMES: Record<string, string[]> = {
  '127.0.0.1': ['127.0.0.1', 'localhost'],
  '::1': ['::1', 'localhost'],
  localhost: ['localhost', '127.0.0.1', '::1'],
};

/**
 * svc's own origins, for the same-origin checks of its own pages (the console and its widget
 * preview): the origin of the base URL and, only while the base URL is the default one derived
 * from a loopback listen address, that address's other loopback names on the same port (so a
 * console opened as http://localhost:3000 works beside http://127.0.0.1:3000). Derived from the
 * configuration alone, never from a request's Host: under DNS rebinding a hostile name resolves to
 * svc, the browser sends that Host and calls the page "same-origin", and only the configured
 * origin tells svc's own pages from it.
 */
export function ownOriginsOf(config: Pick<Config, 'baseUrl' | 'baseUrlExplicit' | 'http'>): readonly string[] {
  const origins = [new URL(config.baseUrl).origin];
  const aliases = config.baseUrlExplicit ? undefined : LOOPBACK_NAMES[config.http.hostname.toLowerCase()];
  for (const hostname of aliases ?? []) {
    const origin = listenUrl({ hostname, port: config.http.port });
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
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
 * name one of svc's own origins in `Origin`; safe ones are refused only when the browser says they
 * are cross-origin (an `Origin` that is not svc's own, or `Sec-Fetch-Site` naming another site:
 * that header may refuse a request, never admit one).
 */
export function crossOriginProblem(request: Request, ownOrigins: readonly string[]): string | null {
  const origin = request.headers.get('origin');
  const fetchSite = request.headers.get('sec-fetch-site');
  if (fetchSite !== null && fetchSite !== 'same-origin' && fetchSite !== 'none') return `the browser marks this request ${fetchSite}`;
  if (origin === null) return isSafeMethod(request.method) ? null : 'a state-changing request must carry a same-origin Origin header';
  return ownOrigins.includes(originOf(origin) ?? '') ? null : `Origin ${JSON.stringify(origin)} is not this server's origin`;
}

/**
 * True when a page of svc itself made this request: its Origin (else Referer) is one of svc's own
 * origins. `Sec-Fetch-Site: same-origin` is not enough: a rebound hostile name is "same-origin"
 * with itself.
 */
export function fromOwnPage(request: Request, ownOrigins: readonly string[]): boolean {
  const origin = request.headers.get('origin');
  const source = originOf(origin !== null ? origin : request.headers.get('referer'));
  return source !== null && ownOrigins.includes(source);
}
