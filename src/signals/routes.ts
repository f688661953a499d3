import { Elysia } from 'elysia';
import { PLATFORMS, type Platform } from '../db/schema/index.ts';
import { ApiError, errorResponse } from '../lib/errors.ts';
import { matchesIfNoneMatch } from '../lib/http-cache.ts';
import { DISCOVERY_CONTENT_TYPES, parseDiscoveryFile, type DiscoveryService } from './discovery.ts';
import { CONTENT_TYPES, SIGNAL_FORMATS, type SignalFormat } from './render.ts';
import type { RenderedSignal, SignalService } from './service.ts';
import { signalDocs as docs } from './docs.ts';
import { syncRoute } from '../lib/sync-route.ts';
import { appRoute, plainResponse, type HotRoute, type Respond } from '../lib/hot-route.ts';

const CACHE_CONTROL = 'public, max-age=300';

/** Split `<id>.<format>`; the id is everything before the last dot. */
function parseFile(file: string): { productId: string; format: SignalFormat } | null {
  const dot = file.lastIndexOf('.');
  const format = file.slice(dot + 1) as SignalFormat;
  if (dot <= 0 || dot > 256 || !SIGNAL_FORMATS.includes(format)) return null;
  return { productId: file.slice(0, dot), format };
}

/** The response headers of a rendered body (with and without its Content-Type, for 200 and 304), built once per body. */
interface SignalHeaders {
  ok: Headers;
  notModified: Headers;
}
const headersOfRendered = new WeakMap<RenderedSignal, SignalHeaders>();

function headersOf(rendered: RenderedSignal, contentType: string): SignalHeaders {
  let built = headersOfRendered.get(rendered);
  if (built === undefined) {
    const headers: Record<string, string> = { ETag: rendered.etag, 'Cache-Control': CACHE_CONTROL, 'Access-Control-Allow-Origin': '*' };
    if (rendered.lastModified > 0) headers['Last-Modified'] = new Date(rendered.lastModified).toUTCString();
    built = { notModified: new Headers(headers), ok: new Headers({ ...headers, 'Content-Type': contentType }) };
    headersOfRendered.set(rendered, built);
  }
  return built;
}

/** The cached bytes with their validators (304 on If-None-Match). 404/410 are answered here rather than through the app's error hook: crawlers ask for many unknown URLs. */
function serve(request: Request, contentType: string, render: () => RenderedSignal, respond: Respond = plainResponse): Response {
  let rendered: RenderedSignal;
  try {
    rendered = render();
  } catch (error) {
    if (error instanceof ApiError) return error.toResponse();
    throw error;
  }
  const headers = headersOf(rendered, contentType);
  if (matchesIfNoneMatch(request, rendered.etag)) return respond(null, headers.notModified, 304);
  return respond(rendered.body, headers.ok);
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

/** The product signal URLs of every platform, the busiest public GETs. */
export function signalProductRoutes(signals: SignalService): PlatformSignalRoutes[] {
  return PLATFORMS.map((platform) => {
    const answer = (request: Request, params: Record<string, string>, respond: Respond) => {
      const parsed = parseFile(params.file!);
      if (!parsed) return errorResponse(404, 'not_found', NOT_A_SIGNAL);
      return serve(request, CONTENT_TYPES[parsed.format], () => signals.render(platform, parsed.productId, parsed.format, params.storeId ?? null), respond);
    };
    return {
      platform,
      anyStore: { path: `/api/v1/${platform}/products/:file`, answer },
      oneStore: { path: `/api/v1/${platform}/stores/:storeId/products/:file`, answer },
    };
  });
}

/**
 * Public, cacheable signal URLs, validated by ETag:
 * - the product signals (`products`, from signalProductRoutes)
 * - GET /api/v1/{platform}/stores/{storeId}/sitemap.xml, sitemap-<n>.xml, llms.txt
 * - GET /robots.txt (the sitemaps of every store whose signals are served)
 */
export function signalRoutes(products: PlatformSignalRoutes[], discovery: DiscoveryService) {
  const storeFile = (platform: Platform) =>
    syncRoute((request, params: { file: string; storeId: string }) => {
      const file = parseDiscoveryFile(params.file);
      if (!file) return errorResponse(404, 'not_found', 'store discovery files are sitemap.xml and llms.txt');
      return serve(request, DISCOVERY_CONTENT_TYPES[file.kind], () => discovery.render(platform, params.storeId, file));
    });
  const app = new Elysia({ name: 'signals' }).get('/robots.txt', syncRoute((request) => serve(request, DISCOVERY_CONTENT_TYPES.robots, discovery.robots)), { detail: docs.robots });
  for (const { platform, anyStore, oneStore } of products) {
    app.get(anyStore.path, appRoute(anyStore), { detail: docs.product(platform) });
    app.get(oneStore.path, appRoute(oneStore), { detail: docs.storeProduct(platform) });
    app.get(`/api/v1/${platform}/stores/:storeId/:file`, storeFile(platform), { detail: docs.storeFile(platform) });
  }
  return app;
}
