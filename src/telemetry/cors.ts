/**
 * Every preflight's answer. `*` is enough: probe requests carry a lead token, never cookies, so the
 * browser sends them without credentials.
 */
const PREFLIGHT_ANSWER = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST',
  'Access-Control-Allow-Headers': 'Content-Type, X-Probe-Token',
  'Access-Control-Max-Age': '600',
};

/**
 * CORS on the probe routes (SVC_PROBE_CORS_ORIGINS), for scanners in web pages that hold a lead token
 * (mode 1). Only `X-Probe-Token` and `Content-Type` are allowed request headers: a signing key
 * (mode 2) must never sit in a browser page, so its headers are not. The probe routes' preflights
 * exist only when origins are configured and are public, so a preflight costs no token; the grant
 * is put on a probe answer by its admission, before the rate limiter can refuse it. Browser
 * extensions with host permission for svc need none of this.
 */
export function probeCors(origins: string[]) {
  const anyOrigin = origins.includes('*');
  const listed = new Set(origins);
  return {
    /**
     * A preflight gets one answer whatever its origin, so it tells no one which origins are listed;
     * the request itself decides: only a listed origin's answer carries the grant the browser needs to read it.
     */
    preflight: () => new Response(null, { status: 204, headers: PREFLIGHT_ANSWER }),
    grant(request: Request, headers: Record<string, string | number>): void {
      const origin = request.headers.get('origin');
      const granted = origin === null ? null : anyOrigin ? '*' : listed.has(origin.toLowerCase()) ? origin : null;
      if (granted) headers['Access-Control-Allow-Origin'] = granted;
      headers.Vary = 'Origin';
    },
  };
}

export type ProbeCors = ReturnType<typeof probeCors>;
