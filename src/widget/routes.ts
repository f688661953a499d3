import { Elysia } from 'elysia';
import { acceptsGzip, matchesIfNoneMatch } from '../lib/http-cache.ts';
import type { WidgetBundle } from './bundle.ts';
import { apiDoc } from '../lib/api-doc.ts';
import { answerInit, appRoute, type HotRoute, type Respond } from '../lib/hot-route.ts';

const embedDoc = apiDoc({
  summary: 'The FAQ widget script',
  description: 'Include it with `<script src=".../embed.js" async data-api-key="sk_live_…">` (docs/widget.md lists its attributes). Cached 5 minutes, then revalidated by ETag.',
  tag: 'operations',
  auth: 'public',
  responses: { 200: { description: 'The script', type: 'text/javascript', headers: { ETag: 'Validator; `If-None-Match` gives 304' } }, 304: { description: 'Not modified' } },
});

/**
 * GET /embed.js. The path is unversioned (spec §9), so caches revalidate after a short max-age
 * and the ETag turns most revalidations into an empty 304.
 */
export function embedRoute(bundle: WidgetBundle): HotRoute {
  const cacheHeaders = {
    'Cache-Control': 'public, max-age=300, stale-while-revalidate=86400',
    ETag: bundle.etag,
    Vary: 'Accept-Encoding',
    'Access-Control-Allow-Origin': '*',
  };
  // Built once: the answers differ only by encoding.
  const unchanged = answerInit(304, cacheHeaders);
  const plain = answerInit(200, { ...cacheHeaders, 'Content-Type': 'text/javascript; charset=utf-8' });
  const gzipped = answerInit(200, { ...cacheHeaders, 'Content-Type': 'text/javascript; charset=utf-8', 'Content-Encoding': 'gzip' });
  // Bodies as Blobs, which responses share: a byte array is copied into every response, a string encoded.
  const gzip = new Blob([bundle.gzip]);
  const js = new Blob([bundle.js]);
  const serve = (request: Request, _params: unknown, respond: Respond) => {
    if (matchesIfNoneMatch(request, bundle.etag)) return respond(null, unchanged);
    return acceptsGzip(request) ? respond(gzip, gzipped) : respond(js, plain);
  };
  return { path: '/embed.js', answer: serve };
}

export function widgetRoutes(embed: HotRoute) {
  return new Elysia().get(embed.path, appRoute(embed), { detail: embedDoc });
}
