import { Elysia } from 'elysia';
import { PLATFORMS, type Platform } from '../stores/types.ts';
import { ApiError, errorResponse } from '../lib/errors.ts';
import { matchesIfNoneMatch } from '../lib/http-cache.ts';
import { DISCOVERY_CONTENT_TYPES, parseDiscoveryFile, type DiscoveryService } from './discovery.ts';
import { CONTENT_TYPES, SIGNAL_FORMATS, type SignalFormat } from './render.ts';
import type { RenderedSignal, SignalService } from './service.ts';
import { signalDocs as docs } from './docs.ts';
import { syncRoute } from '../lib/sync-route.ts';
import { answerInit, answeringLateErrors, appRoute, plainResponse, type AnswerInit, type HotRoute, type Respond } from '../lib/hot-route.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';

const CACHE_CONTROL = 'public, max-age=300';

/** Split `<id>.<format>`; the id is everything before the last dot. */
function parseFile(file: string): { productId: string; format: SignalFormat } | null {
  const dot = file.lastIndexOf('.');
  const format = file.slice(dot + 1) as SignalFormat;
  if (dot <= 0 || dot > 256 || !SIGNAL_FORMATS.includes(format)) return null;
  return { productId: file.slice(0, dot), format };
}

/** The status and response headers of a rendered body (with and without its Content-Type, for 200 and 304), built once per body. */
interface SignalHeaders {
  ok: AnswerInit;
  notModified: AnswerInit;
}
const headersOfRendered = new WeakMap<RenderedSignal, SignalHeaders>();

function headersOf(rendered: RenderedSignal, contentType: string): SignalHeaders {
  let built = headersOfRendered.get(rendered);
  if (built === undefined) {
    const headers: Record<string, string> = { ETag: rendered.etag, 'Cache-Control': CACHE_CONTROL, 'Access-Control-Allow-Origin': '*' };
    if (rendered.lastModified > 0) headers['Last-Modified'] = new Date(rendered.lastModified).toUTCString();
    built = { notModified: answerInit(304, headers), ok: answerInit(200, { ...headers, 'Content-Type': contentType }) };
    headersOfRendered.set(rendered, built);
  }
  return built;
}

/**
 * What rendering threw, answered here when it is an ApiError (404, 410) rather than through the
 * app's error hook: crawlers ask for many unknown URLs.
 */
function renderRefusal(error: unknown): Response {
  if (error instanceof ApiError) return error.toResponse();
  throw error;
}

/** The cached bytes with their validators (304 on If-None-Match). */
function answerRendered(request: Request, rendered: RenderedSignal, contentType: string, respond: Respond): Response {
  const headers = headersOf(rendered, contentType);
  if (matchesIfNoneMatch(request, rendered.etag)) return respond(null, headers.notModified);
  return respond(rendered.body, headers.ok);
}

/** How the app answers an error it did not expect (a storage failure while a late answer was read). */
export type FailedAnswer = (error: unknown, request: Request) => Response;

/**
 * The answer of what rendering gave. One that waited for storage is built with `plainResponse`
 * (`respond` serves the request in hand only while the answer runs).
 */
function answerOf(request: Request, rendered: MaybePromise<RenderedSignal>, contentType: string, respond: Respond): Response | Promise<Response> {
  if (rendered instanceof Promise) return rendered.then((late) => answerRendered(request, late, contentType, plainResponse), renderRefusal);
  return answerRendered(request, rendered, contentType, respond);
}

/** A rendered answer through the app, or the refusal of what `render` threw; a late failure is answered by `fail` (Elysia does not answer a rejected promise of a route composed without one). */
function serve(request: Request, contentType: string, render: () => MaybePromise<RenderedSignal>, fail: FailedAnswer): Response | Promise<Response> {
  let rendered: MaybePromise<RenderedSignal>;
  try {
    rendered = render();
  } catch (error) {
    return renderRefusal(error);
  }
  const answered = answerOf(request, rendered, contentType, plainResponse);
  return answered instanceof Promise ? answered.catch((error: unknown) => fail(error, request)) : answered;
}

const NOT_A_SIGNAL = 'signal URLs end in .jsonld, .llm, .md or .meta';

/** One platform's product signal routes. */
export interface PlatformSignalRoutes {
  platform: Platform;
  /** GET /api/v1/{platform}/products/{id}.jsonld|.llm|.md|.meta (any store of the platform; 404 when two have it) */
  anyStore: HotRoute;
  /** GET /api/v1/{platform}/stores/{storeId}/products/{id}.{format} (never ambiguous) */
  oneStore: HotRoute;
}

/** The product signal URLs of every platform, the busiest public GETs; what a late answer throws is answered by `fail`. */
export function signalProductRoutes(signals: SignalService, fail: FailedAnswer): PlatformSignalRoutes[] {
  return PLATFORMS.map((platform) => {
    const productAnswer = (request: Request, params: Record<string, string>, respond: Respond) => {
      const parsed = parseFile(params.file!);
      if (!parsed) return errorResponse(404, 'not_found', NOT_A_SIGNAL);
      let rendered: MaybePromise<RenderedSignal>;
      try {
        rendered = signals.render(platform, parsed.productId, parsed.format, params.storeId ?? null);
      } catch (error) {
        return renderRefusal(error);
      }
      return answerOf(request, rendered, CONTENT_TYPES[parsed.format], respond);
    };
    return {
      platform,
      anyStore: answeringLateErrors({ path: `/api/v1/${platform}/products/:file`, answer: productAnswer }, fail),
      oneStore: answeringLateErrors({ path: `/api/v1/${platform}/stores/:storeId/products/:file`, answer: productAnswer }, fail),
    };
  });
}

/**
 * Public, cacheable signal URLs, validated by ETag:
 * - the product signals (`products`, from signalProductRoutes)
 * - GET /api/v1/{platform}/stores/{storeId}/sitemap.xml, sitemap-<n>.xml, llms.txt
 * - GET /robots.txt (the sitemaps of every store whose signals are served)
 */
export function signalRoutes(products: PlatformSignalRoutes[], discovery: DiscoveryService, fail: FailedAnswer) {
  const storeFile = (platform: Platform) =>
    syncRoute((request, params: { file: string; storeId: string }) => {
      const file = parseDiscoveryFile(params.file);
      if (!file) return errorResponse(404, 'not_found', 'store discovery files are sitemap.xml and llms.txt');
      return serve(request, DISCOVERY_CONTENT_TYPES[file.kind], () => discovery.render(platform, params.storeId, file), fail);
    });
  const app = new Elysia({ name: 'signals' }).get('/robots.txt', syncRoute((request) => serve(request, DISCOVERY_CONTENT_TYPES.robots, discovery.robots, fail)), { detail: docs.robots });
  for (const { platform, anyStore, oneStore } of products) {
    app.get(anyStore.path, appRoute(anyStore), { detail: docs.product(platform) });
    app.get(oneStore.path, appRoute(oneStore), { detail: docs.storeProduct(platform) });
    app.get(`/api/v1/${platform}/stores/:storeId/:file`, storeFile(platform), { detail: docs.storeFile(platform) });
  }
  return app;
}
