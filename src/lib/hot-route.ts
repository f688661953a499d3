import { pathEnd, pathStart } from './request-path.ts';
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
  /** Builds its successful responses (200, 304) with `respond`; errors as usual. */
  answer: (request: Request, params: Record<string, string>, respond: Respond) => Response;
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

const NO_PARAMS: Record<string, string> = Object.freeze({});

type Handler = (request: Request) => Response | Promise<Response>;

interface Observer {
  /** The observed answer (request id, nosniff, metrics and log line, as for the app's requests). */
  routeHandlerOf(template: string, answer: HotRoute['answer'], fail: (error: unknown, request: Request) => Response): (request: Request, params: Record<string, string>) => Response;
}

/**
 * Whether the path as sent, `url` from `start` to `end`, is exactly `template` filled with `params`:
 * the template's literal runs and the parameters' values in turn, compared in place (parameter names
 * are split out once; nothing is built per request, not even the path).
 */
function exactPath(template: string): (url: string, start: number, end: number, params: Record<string, string>) => boolean {
  // '/a/:x/b' -> ['/a/', ':x', '/b']: literal runs and parameter names alternate.
  const parts = template
    .split(/(?<=\/)(:[^/]+)/)
    .filter((part) => part !== '')
    .map((part) => (part.charCodeAt(0) === 58 /* : */ ? { param: part.slice(1) } : { literal: part }));
  if (parts.length === 1 && 'literal' in parts[0]!) return (url, start, end) => end - start === template.length && url.startsWith(template, start);
  return (url, start, end, params) => {
    let at = start;
    for (const part of parts) {
      const text = 'literal' in part ? part.literal : params[part.param];
      if (text === undefined || !url.startsWith(text, at)) return false;
      at += text.length;
    }
    return at === end;
  };
}

/**
 * Whether the server may answer `request`, matched by Bun's router to `route` with `params`, without
 * the app: only when the app would route it the same way and none of its request gate checks could
 * refuse it. That is, its path as sent has no percent-escape (the gate refuses malformed ones; Bun
 * and Elysia decode them differently) and is exactly the template filled with the parameters (not so
 * for `//`, which Bun's router collapses and the app does not), and it declares no body (the gate
 * refuses a declared oversize one). Any other request is the app's, as before.
 */
function answerableAhead(exact: ReturnType<typeof exactPath>, request: Request, params: Record<string, string>): boolean {
  if (request.headers.get('content-length') !== null) return false;
  const url = request.url;
  const start = pathStart(url);
  if (start === -1) return false;
  const end = pathEnd(url, start);
  const escape = url.indexOf('%', start);
  return (escape === -1 || escape >= end) && exact(url, start, end, params);
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
    const exact = exactPath(route.path);
    const observed = observer.routeHandlerOf(route.path, route.answer, app.errorAnswer);
    // Bun builds a request's params object when asked: a route without parameters never asks.
    const hasParams = route.path.includes(':');
    routes[route.path] = {
      GET: (request) => {
        const params = hasParams ? request.params : NO_PARAMS;
        return answerableAhead(exact, request, params) ? observed(request, params) : fetch(request);
      },
    };
  }
  return routes;
}
