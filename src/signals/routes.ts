import { Elysia } from 'elysia';
import { PLATFORMS, type Platform } from '../db/schema/index.ts';
import { ApiError, errorResponse } from '../lib/errors.ts';
import { matchesIfNoneMatch, notModified } from '../lib/http-cache.ts';
import { CONTENT_TYPES, SIGNAL_FORMATS, type SignalFormat } from './render.ts';
import type { RenderedSignal, SignalService } from './service.ts';

const CACHE_CONTROL = 'public, max-age=300';

/** Split `<id>.<format>`; the id is everything before the last dot. */
function parseFile(file: string): { productId: string; format: SignalFormat } | null {
  const dot = file.lastIndexOf('.');
  const format = file.slice(dot + 1) as SignalFormat;
  if (dot <= 0 || dot > 256 || !SIGNAL_FORMATS.includes(format)) return null;
  return { productId: file.slice(0, dot), format };
}

/** GET /api/v1/{platform}/products/{id}.jsonld|.llm|.md|.meta — public, cacheable, validated by ETag. */
export function signalRoutes(signals: SignalService) {
  const serve = (platform: Platform) => ({ params, request }: { params: { file: string }; request: Request }) => {
    const parsed = parseFile(params.file);
    if (!parsed) return errorResponse(404, 'not_found', 'signal URLs end in .jsonld, .llm, .md or .meta');
    let rendered: RenderedSignal;
    try {
      rendered = signals.render(platform, parsed.productId, parsed.format);
    } catch (error) {
      // Answered here rather than through the app's error hook: crawlers ask for many unknown ids.
      if (error instanceof ApiError) return error.toResponse();
      throw error;
    }
    const headers = {
      ETag: rendered.etag,
      'Last-Modified': new Date(rendered.lastModified).toUTCString(),
      'Cache-Control': CACHE_CONTROL,
      'Access-Control-Allow-Origin': '*',
    };
    if (matchesIfNoneMatch(request, rendered.etag)) return notModified(headers);
    return new Response(rendered.body, { headers: { ...headers, 'Content-Type': CONTENT_TYPES[parsed.format] } });
  };
  const [a, b, c] = PLATFORMS;
  return new Elysia({ name: 'signals' })
    .get(`/api/v1/${a}/products/:file`, serve(a))
    .get(`/api/v1/${b}/products/:file`, serve(b))
    .get(`/api/v1/${c}/products/:file`, serve(c));
}
