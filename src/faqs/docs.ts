import { t } from 'elysia';
import { FAQ_ENTITY_TYPES, FAQ_STATUSES } from './types.ts';
import { apiDoc, jsonBodyFailures, integer, isoTime, page, type Failure } from '../lib/api-doc.ts';

// OpenAPI descriptions of the FAQ routes (src/faqs/routes.ts).

const faq = t.Object({
  id: t.String(),
  storeId: t.String(),
  entityType: t.String({ enum: [...FAQ_ENTITY_TYPES] }),
  entityRef: t.String({ description: 'The product’s platform id, a category or a page reference' }),
  question: t.String(),
  answer: t.String({ description: 'Sanitised HTML' }),
  position: integer(),
  status: t.String({ enum: [...FAQ_STATUSES] }),
  createdAt: isoTime(),
  updatedAt: isoTime(),
});
const example = {
  id: 'faq_01JD8M1N2P3Q4R5S6T7V8W9X0Y',
  storeId: 'st_01JD8M1N2P3Q4R5S6T7V8W9X0Y',
  entityType: 'product',
  entityRef: '8842',
  question: 'Is the shoe waterproof?',
  answer: '<p>No, it is water-resistant.</p>',
  position: 0,
  status: 'approved',
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
};
const body = jsonBodyFailures('question: Expected string length greater or equal to 1');
const notFound: Failure = [404, 'not_found', 'no FAQ entry with id "faq_unknown"'];

export const faqDocs = {
  create: apiDoc({
    summary: 'Create an FAQ entry',
    description: 'For a product, category or page of a store; `pending` until approved unless `status` says otherwise. Only approved entries are published.',
    tag: 'faqs',
    auth: 'admin',
    responses: { 201: { description: 'The new entry', schema: faq, example } },
    errors: [...body, [404, 'not_found', 'no store with id "st_unknown"']],
    bodyExample: { storeId: example.storeId, entityType: 'product', entityRef: '8842', question: example.question, answer: example.answer, status: 'approved' },
  }),
  list: apiDoc({
    summary: 'List a store’s FAQ entries',
    description: 'One entity’s entries (`entityType` and `entityRef`, not paged) or the whole store’s, newest first in pages.',
    tag: 'faqs',
    auth: 'admin',
    responses: { 200: { description: 'The entries', schema: page(faq), example: { items: [example], nextCursor: null } } },
    errors: [[400, 'invalid_query', 'entityType and entityRef: give both (one entity) or neither (the whole store)'], [404, 'not_found', 'no store with id "st_unknown"']],
  }),
  get: apiDoc({ summary: 'Get an FAQ entry', tag: 'faqs', auth: 'admin', responses: { 200: { description: 'The entry', schema: faq, example } }, errors: [notFound] }),
  update: apiDoc({
    summary: 'Change an FAQ entry',
    description: 'Any of question, answer, status and position; at least one.',
    tag: 'faqs',
    auth: 'admin',
    responses: { 200: { description: 'The changed entry', schema: faq, example } },
    errors: [...body, notFound],
    bodyExample: { status: 'approved' },
  }),
  remove: apiDoc({ summary: 'Delete an FAQ entry', tag: 'faqs', auth: 'admin', responses: { 204: { description: 'Deleted' } }, errors: [notFound] }),
  publicPreflight: apiDoc({
    summary: 'CORS preflight of the widget’s FAQ read',
    description: 'The same answer for every origin (a preflight cannot carry the key, and answering by origin would tell which domains have a widget key); the GET checks the key and grants only a verified origin.',
    tag: 'public',
    auth: 'public',
    responses: { 204: { description: 'Allowed: any origin, method GET, header X-Api-Key', headers: { 'Access-Control-Allow-Origin': '*', 'Access-Control-Max-Age': 'Seconds the answer may be cached (600)' } } },
  }),
  publicList: apiDoc({
    summary: 'The approved FAQs of a product, category or page (the widget)',
    description: 'For the embed widget: the key’s store only, from the key’s allowed domains. Cached privately for 60 s with an ETag (`If-None-Match` gives 304).',
    tag: 'public',
    auth: 'widget',
    inputs: [
      { name: 'type', in: 'query', required: true, description: 'What the entries are about', schema: t.String({ enum: [...FAQ_ENTITY_TYPES] }) },
      { name: 'ref', in: 'query', required: true, description: 'The product’s platform id (or handle), a category or page reference', schema: t.String({ minLength: 1, maxLength: 255 }) },
    ],
    responses: {
      200: {
        description: 'The approved entries, in position order',
        schema: t.Object({ entity: t.Object({ type: t.String(), ref: t.String() }), items: t.Array(t.Object({ id: t.String(), question: t.String(), answer: t.String() })) }),
        example: { entity: { type: 'product', ref: '8842' }, items: [{ id: example.id, question: example.question, answer: example.answer }] },
        headers: { ETag: 'Validator of this answer', 'Cache-Control': 'private, max-age=60' },
      },
      304: { description: 'Not modified (`If-None-Match` matched)' },
    },
    errors: [
      [403, 'invalid_api_key', 'the API key is unknown, malformed or revoked'],
      [403, 'insufficient_scope', 'this key lacks the products:read scope'],
      [400, 'invalid_request', 'type: must be one of product, category, page'],
      [404, 'not_found', 'the store of this key is not active'],
      [410, 'signals_withdrawn', 'the store uninstalled svc or was disconnected; its content is withdrawn'],
    ],
  }),
};
