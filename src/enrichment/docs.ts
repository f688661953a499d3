import { t } from 'elysia';
import { apiDoc, jsonBodyFailures, isoTime, type Failure } from '../lib/api-doc.ts';

// OpenAPI descriptions of the enrichment routes (src/enrichment/routes.ts).

const enrichment = t.Object({
  productId: t.String(),
  summary: t.String(),
  highlights: t.Array(t.String()),
  attributes: t.Record(t.String(), t.String()),
  createdAt: isoTime(),
  updatedAt: isoTime(),
});
const example = {
  productId: '8842',
  summary: 'A light trail shoe with a grippy sole.',
  highlights: ['280 g', 'Vibram sole'],
  attributes: { drop: '6 mm' },
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
};
const notFound: Failure = [404, 'not_found', 'no product with id "8842"'];

export const enrichmentDocs = {
  put: apiDoc({
    summary: 'Set a product’s enrichment',
    description: 'Plain text only (tags are stripped); published in the product’s signals.',
    tag: 'stores',
    auth: 'admin',
    responses: { 200: { description: 'The saved enrichment', schema: enrichment, example } },
    errors: [...jsonBodyFailures('summary: Expected string length greater or equal to 1'), notFound],
    bodyExample: { summary: example.summary, highlights: example.highlights, attributes: example.attributes },
  }),
  get: apiDoc({ summary: 'Get a product’s enrichment', tag: 'stores', auth: 'admin', responses: { 200: { description: 'The enrichment', schema: enrichment, example } }, errors: [notFound] }),
  remove: apiDoc({ summary: 'Remove a product’s enrichment', tag: 'stores', auth: 'admin', responses: { 204: { description: 'Removed' } }, errors: [notFound] }),
};
