import { Elysia, type AnyElysia } from 'elysia';
import { createKeyStore } from './auth/keys.ts';
import { createLeadStore } from './auth/leads.ts';
import { authorizeBearer, scopeCheck } from './auth/guard.ts';
import { adminAuthRoutes, publicLeadRoutes } from './auth/routes.ts';
import type { Config } from './config.ts';
import type { GeoLookup } from './geo/lookup.ts';
import { healthRoutes } from './health/routes.ts';
import { jsonBodyParser, payloadTooLarge, useBodyBudget } from './lib/body.ts';
import { createBodyBudget } from './lib/body-budget.ts';
import { addressKey, clientAddress, type PeerAddress } from './lib/client-ip.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { ApiError, errorResponse } from './lib/errors.ts';
import { createCatalogEntries, entityRefs } from './catalog/entries.ts';
import { catalogRoutes } from './catalog/routes.ts';
import { enrichmentRoutes } from './enrichment/routes.ts';
import { createEnrichmentStore } from './enrichment/store.ts';
import { adminFaqRoutes, publicFaqRoute, publicFaqRoutes } from './faqs/routes.ts';
import { createPublicFaqs } from './faqs/public.ts';
import { createFaqStore } from './faqs/store.ts';
import { signalProductRoutes, signalRoutes } from './signals/routes.ts';
import { createSignalService } from './signals/service.ts';
import { createDiscoveryService } from './signals/discovery.ts';
import { badgeRoute, badgeRoutes, dashboardRoutes } from './scans/routes.ts';
import { backlogView } from './scans/backlog.ts';
import { storeRoutes } from './stores/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { createWebhookServices, type WebhookServices } from './webhooks/services.ts';
import { routeSubject, takeRouteLimit } from './ratelimit/guard.ts';
import { createTierLimiter, type SharedBuckets } from './ratelimit/tiers.ts';
import { probeAdmission, type Admission } from './telemetry/admission.ts';
import { probeCors } from './telemetry/cors.ts';
import { bulkBodyLimit } from './telemetry/pipeline.ts';
import { telemetryRoutes } from './telemetry/routes.ts';
import { createScanWriter, type ScanWriter } from './telemetry/writer.ts';
import type { WidgetBundle } from './widget/bundle.ts';
import { embedRoute, widgetRoutes } from './widget/routes.ts';
import { refuseMalformedRequest, requestPath } from './lib/request-path.ts';
import { routeAccess, verifiedByTheRoute, type AccessCheck, type Auth, type RouteAccess } from './lib/access.ts';
import { routeMethods } from './lib/route-methods.ts';
import { metricsRoutes } from './observability/routes.ts';
import { appCollector, createObservability, databaseCollector, rollupBacklogCollector, writerHooks, type Observability } from './observability/service.ts';
import { consoleSessionAuth, consoleSessionLookup, consoleSessionRoutes, sessionCheck } from './console/session-routes.ts';
import { createSessionStore } from './console/sessions.ts';
import type { Storage } from './storage/index.ts';
import { soleInstance, type Instance } from './lib/instance.ts';
import { andThen, type MaybePromise } from './lib/maybe-promise.ts';
import { consolePageRoutes } from './console/routes.ts';
import { landingRoutes } from './landing/routes.ts';
import { pageAssetRoutes, type PageBundle } from './lib/page-bundle.ts';
import { fromOwnPage, ownOriginsOf } from './lib/same-origin.ts';
import { SIGN_UP_LIMIT } from './auth/docs.ts';
import type { ApiKey } from './auth/keys.ts';
import { apiDocRoutes } from './apidocs/routes.ts';
import { buildInfo } from './lib/build-info.ts';
import { answeringLateErrors, type HotRoute } from './lib/hot-route.ts';
import { lastRequestMemo } from './lib/last-request.ts';

export interface AppDeps {
  config: Config;
  /** The records of every domain, on the engine the server opened (src/storage/open.ts). */
  storage: Storage;
  widget: WidgetBundle;
  /** Country lookup for scans without a valid `country` (src/geo). */
  geo: GeoLookup;
  clock?: Clock;
  /** Stores, catalogue and job queue; the server passes its own so it can run the job worker. */
  webhooks?: WebhookServices;
  /** Socket peer of a request; defaults to the listening server's `requestIP` (tests inject one). */
  peerAddress?: PeerAddress;
  /** Group-commit scan writer; the server passes its own so shutdown can flush it. */
  scanWriter?: ScanWriter;
  /** Logger, metrics and request observer; the server passes its own (its writer reports to the same metrics). */
  observability?: Observability;
  /** The landing page and the console's page shell with their bundled scripts and styles. */
  pages: { landing: PageBundle; console: PageBundle };
  /** Rate-limit buckets every instance shares (Redis, with --redis-url); without, each instance keeps its own. */
  sharedLimits?: SharedBuckets;
  /** This process among the service's instances (its id and role, in /healthz); the only one, as leader, unless given. */
  instance?: Instance;
}

/** First validation failure as one sentence naming the field. */
function validationDetail(error: unknown, request: Request): string {
  const { type, value, all } = error as { type?: string; value?: unknown; all?: { path?: string; summary?: string; message?: string }[] };
  const first = all?.[0];
  if (!first) return 'the request does not match the expected shape';
  const where = first.path ? first.path.replace(/^\//, '').replaceAll('/', '.') : type === 'property' ? coercedParameter(request, value) : 'body';
  return `${where || 'body'}: ${first.summary ?? first.message ?? 'invalid value'}`;
}

/** Elysia checks the bounds of a number it read from the query string on the value alone, without its name: find the parameter holding it. */
function coercedParameter(request: Request, value: unknown): string {
  for (const [name, raw] of new URL(request.url).searchParams) if (raw !== '' && Number(raw) === value) return name;
  return `value ${JSON.stringify(value)}`;
}

interface ErrorContext {
  /** Logs an error no rule expected (answered 500). */
  unexpected: (error: unknown) => void;
  /** The methods the app has routes for at a path (for 405 and `Allow`). */
  methodsAt: (path: string) => string[];
}

/** Every failure leaves as `{ error, detail }` with the status the spec names. */
function toErrorResponse(code: string | number, error: unknown, request: Request, { unexpected, methodsAt }: ErrorContext): Response {
  // A client that hung up mid-upload is not a server error (nor a malformed body): its request line
  // says 499, as proxies do, and is a warning under the log's line budget; nothing else is logged.
  if (request.signal.aborted) return errorResponse(499, 'client_closed_request', 'the client closed the connection before the request was read');
  if (error instanceof ApiError) return error.toResponse();
  // Elysia wraps what a parse hook throws; our body parser throws ApiErrors (413, 415, 400).
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof ApiError) return cause.toResponse();
  switch (code) {
    case 'NOT_FOUND': {
      const path = requestPath(request);
      const allowed = methodsAt(path);
      if (allowed.length === 0) return errorResponse(404, 'not_found', `no route for ${request.method} ${path}`);
      return errorResponse(405, 'method_not_allowed', `${path} answers ${allowed.join(', ')}, not ${request.method}`, { Allow: allowed.join(', ') });
    }
    case 'VALIDATION':
      return errorResponse(400, 'invalid_request', validationDetail(error, request));
    case 'PARSE':
      return errorResponse(400, 'malformed_body', 'the request body could not be parsed');
    case 'INVALID_COOKIE_SIGNATURE':
      return errorResponse(400, 'invalid_request', 'invalid cookie');
    default:
      unexpected(error);
      return errorResponse(500, 'internal_error', 'an unexpected error occurred');
  }
}

type RequestCheck = (context: { request: Request }) => Response | undefined;

/**
 * The app's one `onRequest` hook: runs `checks` in order and answers with the first refusal. One
 * hook rather than one per check: Elysia reads each hook's source to guess whether it is async, and
 * makes every request's handling async (a promise per request) when any hook looks so; this
 * function's source does not, whatever the checks' look like (test/hot-paths.test.ts).
 */
function requestGate(checks: RequestCheck[]) {
  // The context is destructured: Elysia reads that too, and would prepare everything (cookies,
  // headers, query) for every route if the hook took the context whole.
  return function gate({ request }: Parameters<RequestCheck>[0]): Response | undefined {
    const context = { request };
    for (const check of checks) {
      const refusal = check(context);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  };
}

/** Compose the capabilities into one app. No I/O happens here: everything arrives through deps. */
export function createApp(deps: AppDeps) {
  const { config, storage, widget } = deps;
  const clock = deps.clock ?? systemClock;
  const observability = deps.observability ?? createObservability(config.log);
  const { logger, metrics, observer } = observability;
  const webhooks = deps.webhooks ?? createWebhookServices(storage, config, clock, { writePause: storage.hot.scanWrites.pause });
  const instance = deps.instance ?? soleInstance();
  const { changes } = storage;
  const storeOf = webhooks.stores.get;
  const storeExists = (id: string) => andThen(storeOf(id), (row) => row !== null);
  const keys = createKeyStore(storage.auth, changes, clock, storeExists);
  const leads = createLeadStore(storage.auth.leads, changes, clock);
  const maxBodyBytes = config.maxBodyBytes;
  const storeAdmin = webhooks.storeAdmin;
  const writer = deps.scanWriter ?? createScanWriter(storage.hot.scanWrites, undefined, writerHooks(observability));
  const limiter = createTierLimiter(config, clock, deps.sharedLimits ?? null);
  const peerAddress: PeerAddress = deps.peerAddress ?? ((request) => app.server?.requestIP(request)?.address ?? null);
  // Asked by the rate limit or admission and again by the body budget: the peer address is a native
  // call (~1 us) that builds an object, so each request's client address is worked out once
  // (lib/last-request.ts: both asks come in one synchronous run from the request gate into the body read).
  const clientIp = lastRequestMemo((request: Request): string | null => clientAddress(request, peerAddress(request), config.trustProxy));
  // Body bytes in flight are capped per client as anonymous rate limits key it: by address or IPv6 network.
  const bodyBudget = createBodyBudget(config.body, (request) => {
    const ip = clientIp(request);
    return ip === null ? 'unknown' : addressKey(ip, config.anonymousLimits.ipv6PrefixBits);
  });
  const probeCorsGrant = config.probeCorsOrigins.length > 0 ? probeCors(config.probeCorsOrigins) : null;
  const admission = probeAdmission({ keys, leads, limiter, clientIp, noteTier: observer.noteTier, cors: probeCorsGrant?.grant });
  const faqs = createFaqStore(storage.faqs, clock);
  const enrichments = createEnrichmentStore(storage.enrichments, clock);
  const signals = createSignalService({ reads: storage.hot, changes, baseUrl: config.baseUrl, cacheBytes: config.signalCacheBytes });
  const discovery = createDiscoveryService({ records: storage.hot.discovery, changes, baseUrl: config.baseUrl });
  const ownOrigins = ownOriginsOf(config);
  const isOwnPage = (request: Request) => fromOwnPage(request, ownOrigins);
  const entries = createCatalogEntries(storage.catalogEntries, clock);
  const publicFaqs = createPublicFaqs({ faqs: storage.hot.faqs, keys, catalog: entityRefs(storage.hot.products, storage.hot.catalogEntries), storeOf, changeStamp: changes.anyChange(), isOwnPage });
  metrics.addCollector(appCollector({ limiter, sharedLimits: deps.sharedLimits ?? null, jobs: webhooks.runner, signalCache: signals.cacheSize, bodies: bodyBudget }));
  metrics.addCollector(databaseCollector(storage.health));
  // The scans' reads answered on the request thread (the badge, a hot GET; the backlog, at every scrape): at once on SQLite.
  const scanReads = storage.hot.scans;
  const rollupBacklog = scanReads.backlog;
  const dashboard = storage.scans.dashboard();
  metrics.addCollector(rollupBacklogCollector(rollupBacklog, clock));
  const rollupBacklogNow = () => andThen(rollupBacklog(), (backlog) => backlogView(backlog, clock.now()));
  const unexpected = (request: Request) => (error: unknown) =>
    logger.log('error', 'unhandled error', { requestId: observer.requestIdOf(request), error: String(error).slice(0, 500) });
  const sessions = createSessionStore(storage.auth.sessions, keys, clock, config.sessionIdleMinutes * 60_000);
  /** Counted for /metrics; a lead whose token sent a committed scan is in use (retention keeps it). */
  const scansCommitted = ({ subject, credentials }: Admission, endpoint: 'telemetry' | 'scan-bulk', scans: number): MaybePromise<void> => {
    metrics.scansIngested(subject.tier, endpoint, scans);
    if (scans > 0 && credentials.mode === 'token' && credentials.lead) return leads.noteScan(credentials.lead.id);
  };
  // The largest body any route takes (a bulk batch): a body declared larger is refused before
  // routing; each route refuses a declared body over its own limit before reading it (lib/body.ts).
  const largestBody = bulkBodyLimit(maxBodyBytes);
  const bodyCheck = ({ request }: { request: Request }): Response | undefined => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') useBodyBudget(request, bodyBudget);
    // Undeclared (chunked) bodies are bounded while they are read (lib/body.ts) and by the server's maxRequestBodySize.
    const declared = request.headers.get('content-length');
    if (declared !== null && Number(declared) > largestBody) return payloadTooLarge(largestBody).toResponse();
    return undefined;
  };
  // The checks every request passes before routing: none of them depends on the path. Who may call
  // a route, and the limits it draws from, are decided on the route the router matched (below).
  const gate = requestGate([refuseMalformedRequest, bodyCheck]);

  // Each auth kind's check, run for the matched route's declared rule (lib/access.ts). The probe
  // routes' admission rate-limits by tier before authentication (DESIGN §7), which needs the body.
  const sessionLookup = consoleSessionLookup({ sessions, baseUrl: config.baseUrl, ownOrigins });
  const sessionAuth = consoleSessionAuth(sessionLookup);
  /** The key of `Authorization: Bearer` when it holds metrics:read (or admin); throws the 401/403 otherwise. */
  const metricsKey = (request: Request) => authorizeBearer(keys, request.headers.get('authorization'), 'metrics:read');
  const checks: Record<Auth, AccessCheck<ApiKey>> = {
    public: () => undefined,
    admin: scopeCheck(keys, 'admin', sessionAuth),
    dashboard: scopeCheck(keys, 'dashboard:read', sessionAuth),
    metrics: ({ request }) => metricsKey(request),
    session: sessionCheck(sessionLookup),
    probe: admission.admit,
    widget: verifiedByTheRoute,
    webhook: verifiedByTheRoute,
  };
  // Declared (not inferred): its routes come from the app it guards.
  const access: RouteAccess<ApiKey> = routeAccess<ApiKey>({
    routes: () => app.routes,
    checks,
    takeLimit: takeRouteLimit(limiter, clientIp),
    waits: limiter.shared,
    noteRoute: observer.routeHook,
  });
  const jsonBody = access.beforeBody(jsonBodyParser(maxBodyBytes));
  // The routes whose access check may ask storage (a key not verified in memory, a console
  // session) wait for its answer; the public ones, the hot GETs among them, never do (lib/access.ts).
  const waitingForAdmission = <Routes extends AnyElysia>(routes: Routes) => new Elysia().onTransform(access.awaitAdmission).use(routes);
  let methodsAt: ((path: string) => string[]) | null = null;
  const errorContext = (request: Request): ErrorContext => ({ unexpected: unexpected(request), methodsAt: (path) => (methodsAt ??= routeMethods(app.routes))(path) });

  // The busiest public GETs, which the server also answers ahead of this app (lib/hot-route.ts).
  // They are public (the widget's FAQs check their key in the answer itself), and of the request
  // gate's checks the server leaves every request they could refuse to the app (answerableAhead).
  const embed = embedRoute(widget);
  // The widget's FAQs wait for storage when the widget key is not verified in memory.
  const publicFaqList = answeringLateErrors(publicFaqRoute(publicFaqs), (error, request) => errorAnswer(error, request));
  // A signal not cached waits for storage where it answers with a promise (not on SQLite).
  const signalProducts = signalProductRoutes(signals, (error, request) => errorAnswer(error, request));
  const badge = answeringLateErrors(badgeRoute(scanReads.badge, changes.anyChange()), (error, request) => errorAnswer(error, request));
  const hotRoutes: HotRoute[] = [embed, publicFaqList, ...signalProducts.flatMap((routes) => [routes.anyStore, routes.oneStore]), badge];

  // normalize: false makes `additionalProperties: false` schemas reject unknown fields instead of
  // silently dropping them (a misspelt `allowedDomains` must not yield an unrestricted key).
  // standardHostname: false makes the router find the path after any host, however short: with its
  // default it looks from the 11th character on, so `http://x/zz/api/...` routed as `/api/...`.
  const app = new Elysia({ normalize: false, handler: { standardHostname: false } })
    .onRequest(gate)
    .onError(({ code, error, request }) => toErrorResponse(code, error, request, errorContext(request)))
    .onTransform(access.admitRouted)
    .use(
      healthRoutes(storage.health, clock, {
        // The /metrics rule: a key with metrics:read (or admin) sees what an operator watches.
        authorized: (request) => request.headers.has('authorization') && andThen(metricsKey(request), Boolean),
        read: async () => ({ instance: { id: instance.id, role: instance.role() }, database: await storage.health.figures(), rollupBacklog: await rollupBacklogNow(), rateLimits: limiter.backend() }),
      }),
    )
    .use(waitingForAdmission(metricsRoutes(metrics)))
    .use(widgetRoutes(embed))
    .use(publicLeadRoutes({ leads, jsonBody }))
    .use(waitingForAdmission(consoleSessionRoutes({ sessions, keys, baseUrl: config.baseUrl, ownOrigins, idleMinutes: config.sessionIdleMinutes, jsonBody, callerOf: access.callerOf })))
    .use(waitingForAdmission(adminAuthRoutes({ keys, leads, jsonBody })))
    .use(waitingForAdmission(storeRoutes(storeAdmin, jsonBody)))
    .use(waitingForAdmission(catalogRoutes(webhooks.catalog, entries, storeExists, enrichments.enrichedAt)))
    .use(waitingForAdmission(enrichmentRoutes({ enrichments, catalog: webhooks.catalog, storeExists, jsonBody })))
    .use(waitingForAdmission(adminFaqRoutes({ faqs, storeOf, jsonBody })))
    .use(publicFaqRoutes(publicFaqList))
    .use(signalRoutes(signalProducts, discovery, (error, request) => errorAnswer(error, request)))
    .use(webhookRoutes(webhooks.receivers, metrics.webhookDelivery))
    .use(
      telemetryRoutes({
        admission,
        limiter,
        cors: probeCorsGrant,
        geo: deps.geo,
        writer,
        clock,
        maxBodyBytes,
        maxScanDataBytes: config.maxScanDataBytes,
        onIngested: scansCommitted,
      }),
    )
    .use(badgeRoutes(badge))
    .use(waitingForAdmission(dashboardRoutes(dashboard, rollupBacklogNow)))
    .use(pageAssetRoutes([deps.pages.landing, deps.pages.console]))
    .use(
      landingRoutes({
        page: deps.pages.landing,
        context: { site: config.site, baseUrl: config.baseUrl, rates: config.rates },
        leads,
        // The form and the API share one bucket: a sign-up counts the same whichever way it comes.
        // The form takes it itself, to answer a refusal as a page.
        signUpLimit: (request) => limiter.take(routeSubject(limiter, clientIp(request), SIGN_UP_LIMIT)),
      }),
    )
    .use(waitingForAdmission(consolePageRoutes({ page: deps.pages.console, site: config.site, baseUrl: config.baseUrl })))
    .use(
      apiDocRoutes(() => documented, {
        title: `${config.site.name} API`,
        version: buildInfo().version,
        baseUrl: config.baseUrl,
        description: 'The HTTP API of svc: probe telemetry, sign-up, the widget, product signals, the dashboard and administration. Errors are `{ "error": "<code>", "detail": "<why>" }` with the status each route lists. The user guide is docs/api.md in the repository.',
      }),
    );
  // The document describes the finished app; it is built on its first request, from this reference.
  const documented: AnyElysia = app;
  /** The app's answer to what a route threw (its error hook's), for answers given ahead of it or after waiting. */
  const errorAnswer = (error: unknown, request: Request) => toErrorResponse('UNKNOWN', error, request, errorContext(request));
  return Object.assign(app, { hotRoutes, errorAnswer });
}

export type App = ReturnType<typeof createApp>;
