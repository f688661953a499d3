import { ApiError } from './errors.ts';
import type { MaybePromise } from './maybe-promise.ts';

/**
 * Who may call a route. Every route declares one (deny by default): documented routes through
 * `apiDoc({ auth })` (lib/api-doc.ts), pages and their files through `undocumentedRoute`. The app
 * enforces it on the route the router matched (`routeAccess`), never on a path worked out beside the
 * router, and the API document's security section is generated from the same declaration.
 */
export type Auth =
  /** Anyone. */
  | 'public'
  /** `Authorization: Bearer sk_live_…` with the `admin` scope, or the console session cookie of such a key. */
  | 'admin'
  /** `Authorization: Bearer sk_live_…` with `dashboard:read` (or `admin`), or the console session cookie. */
  | 'dashboard'
  /** `Authorization: Bearer sk_live_…` with `metrics:read` (or `admin`). */
  | 'metrics'
  /** Mode 1 (`X-Probe-Token`) or mode 2 (`X-Probe-Key` with `X-Probe-Timestamp` and `X-Probe-Signature`). */
  | 'probe'
  /** `X-Api-Key` of a `products:read` key bound to a store, from one of its allowed domains. */
  | 'widget'
  /** The console session cookie when the request carries one (the session routes themselves): refused from another site; without a live session the request goes on with no caller. */
  | 'session'
  /** A platform's signed webhook delivery (each platform's signature header; see the route). */
  | 'webhook';

/** A per-client-address limit a public route draws from before anything else about it runs. */
export interface RouteLimit {
  /** What the 429 says is counted, e.g. "sign-ups". */
  unit: string;
  /** The tier counted in (default anonymous); webhook deliveries have a rate of their own. */
  tier?: 'anonymous' | 'webhook';
  /** The bucket's name: routes naming the same bucket share it. */
  bucket: string;
}

/** A route's declared access: who may call it, and the per-address limit it draws from, if any. */
export interface AccessRule {
  auth: Auth;
  limit?: RouteLimit;
}

/** Where a route's `detail` keeps its access rule (an OpenAPI extension field the document builder drops). */
export const ROUTE_ACCESS = 'x-svc-access';

/** The `detail` of a route kept out of the API document (pages and their files): its access rule alone. */
export const undocumentedRoute = (rule: AccessRule) => ({ hide: true, [ROUTE_ACCESS]: rule });

/** A route as Elysia lists it (`app.routes`): its hooks with the function each holds. */
interface RouteDefinition {
  method: string;
  path: string;
  hooks?: { detail?: unknown; transform?: readonly { fn: unknown }[] };
}

/** The access rule a route declares, or null when it declares none. */
export function accessRuleOf(route: RouteDefinition): AccessRule | null {
  const rule = (route.hooks?.detail as Record<string, unknown> | undefined)?.[ROUTE_ACCESS] as AccessRule | undefined;
  return rule ?? null;
}

/** What routing established about a request: the request, the template of the route that matched it, its response headers. */
export interface RoutedRequest {
  request: Request;
  route: string;
  set: { headers: Record<string, string | number> };
}

/**
 * One auth kind's check: returns when the caller may go on (with the caller it identified, such as
 * an API key, or nothing), throws its refusal (an ApiError) otherwise. A check that must ask
 * storage (a key not verified in memory, a console session) answers with a promise instead.
 */
export type AccessCheck<Caller> = (routed: RoutedRequest) => MaybePromise<Caller | void>;

/**
 * For auth kinds the route itself verifies from what only it reads (a webhook's signature over its
 * body, the widget key of a route the server also answers ahead of the app): nothing to do before
 * the route runs. The route walk (test/route-access.test.ts) holds each such route to refusing an
 * unauthenticated call.
 */
export const verifiedByTheRoute = (): void => undefined;

interface AccessDeps<Caller> {
  /** The app's routes, read once at the first request (every route is registered by then). */
  routes: () => readonly RouteDefinition[];
  checks: Record<Auth, AccessCheck<Caller>>;
  /** Takes one token from the limit's bucket for the request's client; throws the 429 (a promise that rejects with it, when the take waits). */
  takeLimit: (request: Request, limit: RouteLimit) => void | Promise<void>;
  /**
   * Whether a take or check may wait (rate limits in Redis): the transform hook is then async.
   * Without, it stays synchronous, so Elysia answers the routes without a promise per request.
   */
  waits: boolean;
  /** Told the matched route first, so the request log and metrics name it whatever the checks decide. */
  noteRoute: (routed: { request: Request; route: string }) => void;
}

/** A route's access rule, and whether the route waits for a check that answers with a promise. */
interface RouteRule {
  rule: AccessRule | null;
  waits: boolean;
}

const ignore = () => {};

/**
 * Enforces each route's declared access on the route the router matched. `admitRouted` runs as the
 * app's transform hook (after routing, before validation and the handler) and `beforeBody` wraps
 * the parse hook of routes whose body Elysia parses, which runs first: so no route's body is read,
 * and no query or body is validated, before its caller is admitted. A route that declares no rule
 * is refused: adding a route without saying who may call it fails closed (and fails
 * test/route-access.test.ts).
 *
 * A check that must ask storage answers with a promise. Elysia decides from a hook's source, once,
 * whether to wait for it, and waiting costs every route a promise: so `admitRouted` never waits
 * (the public routes, the hot GETs among them, stay without a promise), and the routes whose check
 * may answer late also run `awaitAdmission` (a transform hook of their own, after `admitRouted`),
 * which waits only when the answer is a promise. A late answer on a route without it is refused
 * (500): a route the app forgot to make wait never runs unadmitted.
 */
export function routeAccess<Caller extends object>({ routes, checks, takeLimit, noteRoute, waits }: AccessDeps<Caller>) {
  /** Each route template's rules by method, built at the first request. */
  let rules: Map<string, Map<string, RouteRule>> | null = null;
  /** Requests admitted before their body was read, so the transform hook does not admit them again. */
  const admittedBeforeBody = new WeakSet<Request>();
  /** Who each admitted request's check identified (an API key), for the routes that act on it. */
  const callers = new WeakMap<Request, Caller>();
  /** Admissions whose check answered with a promise, until awaitAdmission waits for them. */
  const pending = new WeakMap<Request, Promise<void>>();

  /** The transform hook of the routes that wait for a late answer. It returns the promise (so Elysia waits) without being async itself: then it costs nothing more. */
  function awaitAdmission({ request }: { request: Request }): Promise<void> | undefined {
    return pending.get(request);
  }

  function ruleOf(method: string, route: string): RouteRule | undefined {
    if (rules === null) {
      rules = new Map();
      for (const definition of routes()) {
        let byMethod = rules.get(definition.path);
        if (byMethod === undefined) rules.set(definition.path, (byMethod = new Map()));
        byMethod.set(definition.method, { rule: accessRuleOf(definition), waits: waitsForAdmission(definition, awaitAdmission) });
      }
    }
    // Elysia answers HEAD with the GET route.
    return rules.get(route)?.get(method === 'HEAD' ? 'GET' : method);
  }

  /** Takes the route's limit, then runs its auth kind's check; a promise when either waits. */
  function admit(routed: RoutedRequest): MaybePromise<void> {
    noteRoute(routed);
    const request = routed.request;
    const found = ruleOf(request.method, routed.route);
    const rule = found?.rule;
    if (!rule) throw new ApiError(403, 'access_undeclared', `${request.method} ${routed.route} declares no access rule, so no one may call it`);
    if (rule.limit) {
      const taking = takeLimit(request, rule.limit);
      // Only with shared buckets (Redis), where every admission may wait (admitRouted is async).
      if (taking !== undefined) return taking.then(() => check(rule.auth, routed, true));
    }
    return check(rule.auth, routed, waits || found.waits);
  }

  /** Runs the auth kind's check; a late answer (a promise) only where the route waits for it (`mayWait`), else refused. */
  function check(auth: Auth, routed: RoutedRequest, mayWait: boolean): MaybePromise<void> {
    const request = routed.request;
    const caller = checks[auth](routed);
    if (caller instanceof Promise) {
      if (!mayWait) {
        caller.catch(ignore);
        throw new Error(`${request.method} ${routed.route}: its ${auth} check answered with a promise, and the route does not wait for it (register it with the routes that run awaitAdmission)`);
      }
      const admitted = caller.then((late) => {
        if (late) callers.set(request, late);
      });
      pending.set(request, admitted);
      return admitted;
    }
    if (caller) callers.set(request, caller);
  }

  return {
    /**
     * The app's transform hook: admits every routed request not already admitted before its body.
     * Elysia awaits a transform hook only when its source looks async, so there are two: with
     * shared buckets (`waits`) every admission may wait; without, the hook stays synchronous (the
     * public routes, the hot GETs among them, answer without a promise), and a check that answers
     * late is waited for by `awaitAdmission` on the routes that run it.
     */
    admitRouted: waits
      ? async function admitRouted({ request, route, set }: RoutedRequest): Promise<void> {
          if (!admittedBeforeBody.has(request)) await admit({ request, route, set });
        }
      : function admitRouted({ request, route, set }: RoutedRequest): void {
          if (!admittedBeforeBody.has(request)) admit({ request, route, set });
        },
    awaitAdmission,
    /**
     * Wraps a parse hook so the caller is admitted before the body is read (a late answer is
     * waited for first: Elysia waits for a parse hook's promise whenever there is one). The context
     * is destructured: Elysia reads a hook's parameters to learn what to prepare (here the route's
     * template), and prepares everything for a hook that takes the context whole.
     */
    beforeBody<Parsed>(parse: (context: { request: Request; contentType: string }) => Parsed) {
      return function admittedParse({ request, route, set, contentType }: RoutedRequest & { contentType: string }): Parsed | Promise<Parsed> {
        const admitted = admit({ request, route, set });
        admittedBeforeBody.add(request);
        // Two steps: Elysia reads a hook's source and treats `return f(...)` as maybe async.
        let parsed: Parsed | Promise<Parsed>;
        parsed = admitted instanceof Promise ? admitted.then(() => parse({ request, contentType })) : parse({ request, contentType });
        return parsed;
      };
    },
    /** The caller the request's access check identified (its API key), or null (public routes, probe and webhook callers). */
    callerOf(request: Request): Caller | null {
      return callers.get(request) ?? null;
    },
  };
}

/** Whether a route runs `hook` among its transform hooks (app.routes lists each route's hooks). */
export function waitsForAdmission(route: RouteDefinition, hook: unknown): boolean {
  return route.hooks?.transform?.some((transform) => transform.fn === hook) ?? false;
}

export type RouteAccess<Caller extends object> = ReturnType<typeof routeAccess<Caller>>;
