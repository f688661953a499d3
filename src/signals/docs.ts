import { t } from 'elysia';
import { apiDoc, type Failure, type Input } from '../lib/api-doc.ts';

// OpenAPI descriptions of the public signal routes (src/signals/routes.ts), one per platform.

const file: Input = {
  name: 'file',
  in: 'path',
  description: '`<product id>.<format>`: `.jsonld` (schema.org Product JSON-LD), `.llm` (JSON for language models), `.md` (Markdown) or `.meta` (JSON of meta tags); docs/signals.md describes each',
  schema: t.String({ pattern: '^.+\\.(jsonld|llm|md|meta)$' }),
};
const cached = { ETag: 'Validator; `If-None-Match` gives 304', 'Cache-Control': 'public, max-age=300', 'Last-Modified': 'When the product last changed' };
const gone: Failure[] = [
  [404, 'not_found', 'signal URLs end in .jsonld, .llm, .md or .meta'],
  [410, 'signals_withdrawn', 'the store uninstalled svc or was disconnected; its content is withdrawn'],
];
const signal = {
  200: { description: 'The signal in the format the extension names', type: 'application/ld+json',
    otherTypes: [{ type: 'application/json', schema: t.Object({}, { additionalProperties: true, description: '`.llm` and `.meta`: a JSON object (docs/signals.md)' }) }, 'text/markdown'],
    headers: cached,
  },
  304: { description: 'Not modified' },
};

export const signalDocs = {
  robots: apiDoc({
    summary: 'robots.txt',
    description: 'Lists the sitemap of every store whose signals are served.',
    tag: 'signals',
    auth: 'public',
    responses: { 200: { description: 'robots.txt', type: 'text/plain', headers: cached }, 304: { description: 'Not modified' } },
  }),
  product: (platform: string) =>
    apiDoc({
      summary: `A ${platform} product’s signal (any store)`,
      description: 'From the store of this platform that has the product; 404 when two stores have it (use the store-scoped URL).',
      tag: 'signals',
      auth: 'public',
      inputs: [file],
      responses: signal,
      errors: gone,
    }),
  storeProduct: (platform: string) =>
    apiDoc({
      summary: `A ${platform} product’s signal in one store`,
      tag: 'signals',
      auth: 'public',
      inputs: [file, { name: 'storeId', in: 'path', description: 'The svc store id', schema: t.String() }],
      responses: signal,
      errors: gone,
    }),
  storeFile: (platform: string) =>
    apiDoc({
      summary: `A ${platform} store’s sitemap or llms.txt`,
      description: '`sitemap.xml` (split into `sitemap-<n>.xml` files for large catalogues) and `llms.txt` link the store’s product signals.',
      tag: 'signals',
      auth: 'public',
      inputs: [
        { name: 'storeId', in: 'path', description: 'The svc store id', schema: t.String() },
        { name: 'file', in: 'path', description: '`sitemap.xml`, `sitemap-<n>.xml` or `llms.txt`', schema: t.String() },
      ],
      responses: { 200: { description: 'The file', type: 'application/xml', otherTypes: ['text/plain'], headers: cached }, 304: { description: 'Not modified' } },
      errors: [[404, 'not_found', 'store discovery files are sitemap.xml and llms.txt'], gone[1]!],
    }),
};
