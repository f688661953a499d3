import { undocumentedRoute } from './access.ts';
import type { HTMLBundle } from 'bun';
import { Elysia } from 'elysia';
import { errorResponse } from './errors.ts';
import { acceptsGzip, etagOf, matchesIfNoneMatch, notModified } from './http-cache.ts';

/** A bundled script or stylesheet, precompressed; its name carries a content hash. */
export interface PageAsset {
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

/** An HTML page with its bundled scripts and styles, referenced under `/assets/`. */
export interface PageBundle {
  html: string;
  assets: Map<string, PageAsset>;
}

export const ASSET_PREFIX = '/assets/';

const basename = (file: string) => file.slice(file.lastIndexOf('/') + 1);

/**
 * An HTML import (`import page from './x.html'`) as served files. In the compiled binary Bun has
 * bundled it ahead of time (`files`, embedded); in development and tests it is bundled here, where
 * npm packages resolve from node_modules (a bundle built at run time inside the binary could not
 * resolve them). Either way the HTML is rewritten to load its chunks from `/assets/<name>`.
 */
export async function loadPageBundle(page: HTMLBundle): Promise<PageBundle> {
  const files: { name: string; type: string; body: Uint8Array<ArrayBuffer>; html: boolean }[] = [];
  if (page.files) {
    for (const file of page.files) {
      const body = new Uint8Array(await Bun.file(file.path).arrayBuffer());
      const type = file.headers['content-type'] ?? 'application/octet-stream';
      files.push({ name: basename(file.path), type, body, html: type.startsWith('text/html') });
    }
  } else {
    const result = await Bun.build({ entrypoints: [page.index], target: 'browser', minify: true });
    if (!result.success) throw new AggregateError(result.logs, `page build failed: ${result.logs.map((log) => log.message).join('; ')}`);
    for (const output of result.outputs) {
      // Every output of an HTML entry reports loader "html"; the content type tells the page apart.
      files.push({ name: basename(output.path), type: output.type, body: new Uint8Array(await output.arrayBuffer()), html: output.type.startsWith('text/html') });
    }
  }
  const page_ = files.find((file) => file.html);
  if (!page_) throw new Error(`page build of ${page.index} produced no HTML`);
  let html = new TextDecoder().decode(page_.body);
  const assets = new Map<string, PageAsset>();
  for (const file of files) {
    if (file.html) continue;
    // Chunks are referenced as "/name" (ahead of time) or "./name" (Bun.build): both become /assets/name.
    html = html.replaceAll(`"/${file.name}"`, `"${ASSET_PREFIX}${file.name}"`).replaceAll(`"./${file.name}"`, `"${ASSET_PREFIX}${file.name}"`);
    assets.set(file.name, { body: file.body, gzip: Bun.gzipSync(file.body, { level: 9 }), type: file.type, etag: etagOf(file.body) });
  }
  // Same-origin chunks need no CORS mode; without the attribute a strict CSP reads more simply.
  html = html.replaceAll(' crossorigin ', ' ');
  return { html, assets };
}

/** A hashed asset: cached for a year (its name changes with its content), gzip when accepted. */
export function assetResponse(request: Request, asset: PageAsset): Response {
  const headers: Record<string, string> = {
    'Cache-Control': 'public, max-age=31536000, immutable',
    ETag: asset.etag,
    Vary: 'Accept-Encoding',
  };
  if (matchesIfNoneMatch(request, asset.etag)) return notModified(headers);
  headers['Content-Type'] = asset.type;
  if (acceptsGzip(request)) {
    headers['Content-Encoding'] = 'gzip';
    return new Response(asset.gzip, { headers });
  }
  return new Response(asset.body, { headers });
}

/**
 * Content-Security-Policy of svc's own pages: nothing inline, scripts and styles from svc only,
 * no plugins, no framing by other sites. `extra` adds directives (such as frame-src for the console).
 */
export function pageCsp(extra: Record<string, string> = {}): string {
  const directives: Record<string, string> = {
    'default-src': "'none'",
    'script-src': "'self'",
    'style-src': "'self'",
    'img-src': "'self' data:",
    'connect-src': "'self'",
    'form-action': "'self'",
    'base-uri': "'none'",
    'frame-ancestors': "'none'",
    ...extra,
  };
  return Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

/** An HTML page of svc's with its security headers; `cache` is `no-store` for pages carrying secrets. */
export function htmlResponse(html: string, options: { status?: number; csp: string; cache?: string; headers?: Record<string, string> }): Response {
  return new Response(html, {
    status: options.status ?? 200,
    headers: {
      ...options.headers,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': options.csp,
      'Referrer-Policy': 'same-origin',
      'Cache-Control': options.cache ?? 'no-cache',
    },
  });
}

/** GET /assets/:name: the chunks of every page bundle (names are content hashes, so they never clash). */
export function pageAssetRoutes(bundles: PageBundle[]) {
  const assets = new Map(bundles.flatMap((bundle) => [...bundle.assets]));
  return new Elysia({ name: 'page-assets' }).get(`${ASSET_PREFIX}:name`, ({ params, request }) => {
    const asset = assets.get(params.name);
    return asset ? assetResponse(request, asset) : errorResponse(404, 'not_found', `no asset ${JSON.stringify(params.name)}`);
  }, { detail: undocumentedRoute({ auth: 'public' }) });
}
