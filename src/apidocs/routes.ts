import type { AnyElysia } from 'elysia';
import { Elysia, t } from 'elysia';
import swaggerBundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import swaggerCssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import { undocumentedRoute } from '../lib/access.ts';
import { apiDoc } from '../lib/api-doc.ts';
import { escapeHtmlText as escapeHtml } from '../lib/html.ts';
import { acceptsGzip, etagOf, matchesIfNoneMatch, notModified } from '../lib/http-cache.ts';
import { assetResponse, htmlResponse, pageCsp, type PageAsset } from '../lib/page-bundle.ts';
import { errorResponse } from '../lib/errors.ts';
import referenceCssPath from './ui/reference.css' with { type: 'file' };
import referenceJsPath from './ui/reference.js' with { type: 'file' };
import { buildApiDocument, type DocumentInfo } from './document.ts';

const asset = (body: Uint8Array<ArrayBuffer>, type: string): PageAsset => ({ body, gzip: Bun.gzipSync(body, { level: 6 }), type, etag: etagOf(body) });

/** The reference page's files, embedded in the binary (`type: 'file'`), read and compressed on first use; named by content hash so they cache for good. */
async function loadReferenceAssets() {
  const files = [
    { name: 'swagger-ui-bundle', ext: 'js', path: swaggerBundlePath, type: 'text/javascript; charset=utf-8' },
    { name: 'swagger-ui', ext: 'css', path: swaggerCssPath, type: 'text/css; charset=utf-8' },
    { name: 'reference', ext: 'js', path: referenceJsPath, type: 'text/javascript; charset=utf-8' },
    { name: 'reference', ext: 'css', path: referenceCssPath, type: 'text/css; charset=utf-8' },
  ];
  const assets = new Map<string, PageAsset>();
  const names: Record<string, string> = {};
  for (const file of files) {
    const loaded = asset(new Uint8Array(await Bun.file(file.path).arrayBuffer()), file.type);
    const name = `${file.name}.${loaded.etag.replace(/\W/g, '').slice(0, 10)}.${file.ext}`;
    assets.set(name, loaded);
    names[`${file.name}.${file.ext}`] = name;
  }
  return { assets, names };
}

function referencePage(title: string, names: Record<string, string>): string {
  const file = (name: string) => `/docs/api/${names[name]}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${file('swagger-ui.css')}">
<link rel="stylesheet" href="${file('reference.css')}">
</head>
<body>
<header class="svc-header"><h1>${escapeHtml(title)}</h1><a href="/openapi.json">openapi.json</a><a href="/">Home</a></header>
<main id="swagger-ui"><noscript>This page needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript></main>
<script src="${file('swagger-ui-bundle.js')}"></script>
<script src="${file('reference.js')}"></script>
</body>
</html>`;
}

const documentDoc = apiDoc({
  summary: 'This OpenAPI 3.1 document',
  description: 'Generated from the route schemas when first asked for, then served from memory. The reference page at `/docs/api` renders it.',
  tag: 'operations',
  auth: 'public',
  responses: { 200: { description: 'The document', schema: t.Object({ openapi: t.String(), info: t.Object({}, { additionalProperties: true }), paths: t.Object({}, { additionalProperties: true }) }, { additionalProperties: true }) } },
});

/**
 * GET /openapi.json: the OpenAPI document of `app`, built on the first request and kept as bytes
 * (with ETag and gzip). GET /docs/api: a reference page rendering it with Swagger UI, whose files
 * are served from the binary, under the same strict CSP as svc's other pages.
 */
export function apiDocRoutes(app: () => AnyElysia, info: DocumentInfo) {
  let document: Promise<PageAsset> | null = null;
  const documentAsset = () => (document ??= buildApiDocument(app(), info).then((built) => asset(new TextEncoder().encode(JSON.stringify(built)), 'application/json;charset=utf-8')));
  let reference: ReturnType<typeof loadReferenceAssets> | null = null;
  let page: string | null = null;
  const csp = pageCsp();
  return new Elysia({ name: 'apidocs' })
    .get(
      '/openapi.json',
      async ({ request }) => {
        const body = await documentAsset();
        const headers: Record<string, string> = { ETag: body.etag, 'Cache-Control': 'no-cache', Vary: 'Accept-Encoding', 'Access-Control-Allow-Origin': '*' };
        if (matchesIfNoneMatch(request, body.etag)) return notModified(headers);
        headers['Content-Type'] = body.type;
        if (!acceptsGzip(request)) return new Response(body.body, { headers });
        headers['Content-Encoding'] = 'gzip';
        return new Response(body.gzip, { headers });
      },
      { detail: documentDoc },
    )
    .get('/docs/api', async () => {
      const { names } = await (reference ??= loadReferenceAssets());
      page ??= referencePage(`${info.title} reference`, names);
      return htmlResponse(page, { csp });
    }, { detail: undocumentedRoute({ auth: 'public' }) })
    .get('/docs/api/:file', async ({ params, request }) => {
      const { assets } = await (reference ??= loadReferenceAssets());
      const found = assets.get(params.file);
      return found ? assetResponse(request, found) : errorResponse(404, 'not_found', `no file ${JSON.stringify(params.file)}`);
    }, { detail: undocumentedRoute({ auth: 'public' }) });
}
