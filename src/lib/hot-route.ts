import { hasValidHostHeader } from './request-path.ts';
import { syncRoute } from './sync-route.ts';

/**
 * A public GET answered two ways with one answer function: through the app (registered with
 * `syncRoute`, so `app.handle`, tests and the OpenAPI document see it like any route) and, by the
 * server, through Bun's own router ahead of the app (`aheadOfTheApp`), which skips the request
 * gate, Elysia's router and its per-request context for the busiest public URLs (issue 12 item 3).
 */
export interface HotRoute {
  /** The route template, as the app registers it and the request log and metrics name it (`:name` parameters). */
  path: string;
  /**
   * Builds its successful responses (200, 304) with `respond`; errors as usual. An answer that
   * must wait for storage (a widget key not verified in memory) is a promise, whose response is
   * built with `plainResponse` (`respond` serves the request in hand only while the answer runs)
   * and which never rejects (answeringLateErrors).
   */
  answer: (request: Request, params: Record<string, string>, respond: Respond) => Response | Promise<Response>;
}

/**
 * The status and headers of a prebuilt answer, built once per answer (`answerInit`) and passed as
 * the init of every response built from it: a Headers object is copied into a response about three
 * times faster than an object literal is converted, and a prebuilt init object saves one more per
 * request.
 */
export interface AnswerInit {
  status: number;
  headers: Headers;
}

/**
 * A prebuilt answer's init: `headers` with `X-Content-Type-Options: nosniff`, which every answer of
 * svc carries (observability/requests.ts), so no response built from it needs it set again.
 */
export function answerInit(status: number, headers: Record<string, string>): AnswerInit {
  return { status, headers: new Headers({ ...headers, 'X-Content-Type-Options': 'nosniff' }) };
}

/**
 * How a hot route builds a response from a body and its prebuilt init. Through the app, plainly
 * (`plainResponse`); ahead of it, the observer's, which puts the request id in first
 * (observability/requests.ts).
 */
export type Respond = (body: Blob | null, init: AnswerInit) => Response;

export const plainResponse: Respond = (body, init) => new Response(body, init);

/** The handler the app registers for a hot route (Elysia composes it without a promise: lib/sync-route.ts). */
export const appRoute = (route: HotRoute) => syncRoute((request, params: Record<string, string>) => route.answer(request, params, plainResponse));

/**
 * `route` with what its late answers throw answered by `fail` (the app's error answer): neither
 * Elysia, which composes a hot route without a promise (lib/sync-route.ts), nor Bun's router would
 * answer a rejected promise as the app answers an error.
 */
export function answeringLateErrors(route: HotRoute, fail: (error: unknown, request: Request) => Response): HotRoute {
  return {
    path: route.path,
    answer: (request, params, respond) => {
      const answer = route.answer(request, params, respond);
      return answer instanceof Promise ? answer.catch((error: unknown) => fail(error, request)) : answer;
    },
  };
}

const NO_PARAMS: Record<string, string> = Object.freeze({});

type Handler = (request: Request) => Response | Promise<Response>;

interface Observer {
  /** The observed answer (request id, nosniff, metrics and log line, as for the app's requests). */
  routeHandlerOf(template: string, answer: HotRoute['answer'], fail: (error: unknown, request: Request) => Response): (request: Request, params: Record<string, string>) => Response | Promise<Response>;
}

/** What Bun's router decodes a malformed percent-escape in a parameter to (U+FFFD, the replacement character). */
const MALFORMED_ESCAPE = '\uFFFD';
/** What `%00` decodes to: the gate refuses it in a path (lib/request-path.ts). */
const NUL = '\u0000';

/**
 * Whether the server may answer `request`, matched by Bun's router to a hot route with `params`,
 * without the app: only when the app would route it the same way and none of its request gate checks
 * could refuse it. Bun's router matches the path as sent: literal segments exactly (no escapes
 * decoded, no `//` collapsed, no dot segment resolved, no trailing `/` ignored, as the app's router),
 * and parameters decoded as the app decodes them, a malformed escape as U+FFFD. So two kinds of
 * request are left to the app, which answers them as before: a parameter with U+FFFD (the gate
 * refuses a malformed escape; a well-formed escape of U+FFFD itself is left too, harmlessly) or with
 * NUL (the gate refuses `%00`), and one
 * that declares a body (the gate refuses a declared oversize one). The request's URL is not read
 * here: a route that needs no query never builds it. test/e2e/public-gets-server.test.ts holds Bun's
 * router to this, path by path, against the app's answers. A Host that is not a valid `host[:port]`
 * is left to the app too (the gate refuses it before routing).
 */
function answerableAhead(request: Request, params: Record<string, string>, names: readonly string[]): boolean {
  if (!hasValidHostHeader(request) || request.headers.get('content-length') !== null) return false;
  for (const name of names) if (params[name]!.includes(MALFORMED_ESCAPE) || params[name]!.includes(NUL)) return false;
  return true;
}

/**
 * The app's hot routes for `Bun.serve`'s `routes`, which Bun matches natively before its `fetch`:
 * each answered by the app's own answer function, observed like every request, its errors answered
 * as the app's error hook answers them; a request the app might answer otherwise goes to `fetch`
 * (the whole observed app). Bun answers HEAD with the GET's status and headers, as the app does.
 */
export function aheadOfTheApp(
  app: { hotRoutes: HotRoute[]; errorAnswer: (error: unknown, request: Request) => Response },
  observer: Observer,
  fetch: Handler,
): Record<string, { GET: (request: Request & { params: Record<string, string> }) => Response | Promise<Response> }> {
  const routes: ReturnType<typeof aheadOfTheApp> = {};
  for (const route of app.hotRoutes) {
    const observed = observer.routeHandlerOf(route.path, route.answer, app.errorAnswer);
    const names = route.path.split('/').filter((segment) => segment.startsWith(':')).map((segment) => segment.slice(1));
    // Bun builds a request's params object when asked: a route without parameters never asks.
    const hasParams = names.length > 0;
    routes[route.path] = {
      GET: (request) => {
        const params = hasParams ? request.params : NO_PARAMS;
        return answerableAhead(request, params, names) ? observed(request, params) : fetch(request);
      },
    };
  }
  return routes;
}
