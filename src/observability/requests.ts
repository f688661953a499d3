import { ERROR_CODE_HEADER } from '../lib/errors.ts';
import { randomSecret } from '../lib/crypto.ts';
import { withoutTrailingSlash } from '../lib/route-methods.ts';
import type { Respond } from '../lib/hot-route.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

/** What hooks learn about a request on its way through the app, for its log line and metrics. */
interface RequestFacts {
  /** The incoming X-Request-Id if sane, else one made up: echoed on the response and in every line about the request. */
  requestId: string;
  /** Elysia's matched route template; null until routing (and for requests answered before it). */
  route: string | null;
  /** Rate-limit tier, on probe routes. */
  tier: string | null;
}

/** Label values for methods come from this set only; anything else is "OTHER". */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** An incoming X-Request-Id is echoed only if it looks like an id (no spaces, quotes or control characters). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@+/=-]{1,128}$/;

const declaredBytes = (request: Request): number | null => {
  const length = request.headers.get('content-length');
  return length !== null && /^\d{1,15}$/.test(length) ? Number(length) : null;
};

/**
 * The request log and the request metrics, around the app's fetch handler: one timer, one WeakMap
 * entry and a few counter increments per request; the log line itself is built only for the lines
 * the logger's budget admits. The route label is always a template (never the raw path), so a
 * flood of random paths adds no series.
 */
export function createRequestObserver({ metrics, logger }: { metrics: Metrics; logger: Logger }) {
  const facts = new WeakMap<Request, RequestFacts>();
  const bootId = randomSecret(6);
  let sequence = 0;

  /** The incoming X-Request-Id if sane, else a new one. */
  function requestIdFor(request: Request): string {
    const incoming = request.headers.get('x-request-id');
    return incoming !== null && SANE_REQUEST_ID.test(incoming) ? incoming : `${bootId}-${(++sequence).toString(36)}`;
  }

  /** The method's label: one of a closed set, else "OTHER". */
  const methodLabel = (sent: string) => (METHODS.has(sent) ? sent : 'OTHER');

  /** Counts one answered request in `series` (its route's and method's) and logs it (within the budget). */
  function countAndLog(request: Request, series: { count(status: number, seconds: number): void }, method: string, route: string, status: number, seconds: number, noted: RequestFacts, code: string | null): void {
    series.count(status, seconds);
    logger.access(status, () => ({
      method,
      route,
      status,
      ms: Math.round(seconds * 100_000) / 100,
      reqBytes: declaredBytes(request),
      ...(noted.tier !== null && { tier: noted.tier }),
      requestId: noted.requestId,
      ...(code !== null && { error: code }),
    }));
  }

  /** Stamps, counts and logs an answer. */
  function finish(request: Request, response: Response, started: number, noted: RequestFacts): Response {
    const seconds = (performance.now() - started) / 1000;
    const status = response.status;
    // Read once: request.method and response.headers are getters into native objects.
    const sent = request.method;
    const method = methodLabel(sent);
    // Answers given before routing (a malformed Host or path, an oversize body) and 404s have no route.
    const route = noted.route ?? 'unmatched';
    const headers = response.headers;
    headers.set('x-request-id', noted.requestId);
    // Every answer, whatever produced it (routes, early refusals, static files, errors): a browser
    // must never sniff an error body or a user-influenced JSON/text answer into a script or page.
    headers.set('x-content-type-options', 'nosniff');
    let code: string | null = null;
    if (status >= 400) {
      code = headers.get(ERROR_CODE_HEADER);
      if (code !== null) headers.delete(ERROR_CODE_HEADER);
    }
    countAndLog(request, metrics.requestSeries(route, method), method, route, status, seconds, noted, code);
    return response;
  }

  return {
    /**
     * Notes the matched route's template, from the app's access check on the matched route (before
     * anything can refuse the request there). A plain function that returns nothing, so Elysia keeps
     * routes synchronous (see `requestGate` in src/app.ts).
     */
    routeHook: function noteRoute({ request, route }: { request: Request; route: string }): void {
      const noted = facts.get(request);
      if (noted) noted.route = withoutTrailingSlash(route);
    },
    noteTier(request: Request, tier: string): void {
      const noted = facts.get(request);
      if (noted) noted.tier = tier;
    },
    /** The request's id, for other lines about it (null outside the observed handler, as under `app.handle`). */
    requestIdOf(request: Request): string | null {
      return facts.get(request)?.requestId ?? null;
    },
    /**
     * The app's fetch handler, observed: serves each request, then counts it, logs it and stamps
     * `X-Request-Id` and `X-Content-Type-Options: nosniff` on the response.
     */
    handlerOf(app: { fetch(request: Request): Response | Promise<Response> }) {
      return (request: Request): Response | Promise<Response> => {
        const started = performance.now();
        const noted: RequestFacts = { requestId: requestIdFor(request), route: null, tier: null };
        facts.set(request, noted);
        const result = app.fetch(request);
        return result instanceof Promise
          ? result.then((response) => finish(request, response, started, noted))
          : finish(request, result, started, noted);
      };
    },
    /**
     * A route's answer observed as `handlerOf` observes the app's, for requests the server answers
     * ahead of the app (src/server.ts): the same id, headers, metrics and log line, under `template`.
     * What `answer` throws becomes `fail`'s response (the app's error answer).
     */
    routeHandlerOf<Params>(template: string, answer: (request: Request, params: Params, respond: Respond) => Response | Promise<Response>, fail: (error: unknown, request: Request) => Response) {
      const route = withoutTrailingSlash(template);
      // The route's GET series, found at its first request (HEAD, which Bun answers with the GET handler, looks its own up).
      let getSeries: ReturnType<Metrics['requestSeries']> | null = null;
      let requestId = '';
      /** The status of the response `respond` built for the request in hand; 0 when the route built its own. */
      let responded = 0;
      // The id goes into the answer's prebuilt headers (nosniff is among them: answerInit) just
      // before its response is built from them, which copies them: set on a built response, it
      // costs about as much again as building it. Every response built from those headers gets its
      // own id, here or in finish.
      const respond: Respond = (body, init) => {
        init.headers.set('x-request-id', requestId);
        responded = init.status;
        return new Response(body, init);
      };
      return (request: Request, params: Params): Response | Promise<Response> => {
        const started = performance.now();
        const noted: RequestFacts = { requestId: requestIdFor(request), route, tier: null };
        requestId = noted.requestId;
        responded = 0;
        let response: Response | Promise<Response>;
        try {
          response = answer(request, params, respond);
        } catch (error) {
          facts.set(request, noted); // so the error's log line names the request
          return finish(request, fail(error, request), started, noted);
        }
        // An answer that waited (built plainly, see HotRoute) is stamped like one the route built
        // itself; the error it may answer with is logged under the request.
        if (response instanceof Promise) {
          facts.set(request, noted);
          return response.then((late) => finish(request, late, started, noted));
        }
        // An answer the route built itself (a 404 of its own) is stamped like any other.
        if (responded === 0) return finish(request, response, started, noted);
        const seconds = (performance.now() - started) / 1000;
        const sent = request.method;
        const method = methodLabel(sent);
        const series = method === 'GET' ? (getSeries ??= metrics.requestSeries(route, method)) : metrics.requestSeries(route, method);
        countAndLog(request, series, method, route, responded, seconds, noted, null);
        return response;
      };
    },
  };
}
