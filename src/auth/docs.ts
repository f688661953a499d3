import { t } from 'elysia';
import { apiDoc, jsonBodyFailures, integer, isoTime, nullable, page, type Failure } from '../lib/api-doc.ts';
import type { RouteLimit } from '../lib/access.ts';
import { SCOPES } from './keys.ts';

/** Sign-ups per client address, whichever way they come (the API here, the landing page's form): one bucket. */
export const SIGN_UP_LIMIT: RouteLimit = { unit: 'sign-ups', bucket: 'sign-up' };

// OpenAPI descriptions of the key, lead and sign-up routes (src/auth/routes.ts).

const keyRecord = t.Object({
  id: t.String(),
  name: t.String(),
  keyPrefix: t.String({ description: 'The first characters of the key, to recognise it; the key itself is stored only as a hash' }),
  scopes: t.Array(t.String({ enum: [...SCOPES] })),
  allowedDomains: t.Array(t.String(), { description: 'Host names (or `*.host`) a widget key may be used from' }),
  storeId: nullable(t.String()),
  createdAt: isoTime(),
  lastUsedAt: nullable(isoTime('When a request last came with the key (admin API, dashboard, console session, widget or signed telemetry), to about a minute; null while none has')),
  revokedAt: nullable(isoTime()),
});

const keyExample = {
  id: 'key_01JD8M1N2P3Q4R5S6T7V8W9X0Y',
  name: 'probe on CI',
  keyPrefix: 'sk_live_Ab3d',
  scopes: ['probe:scan'],
  allowedDomains: [],
  storeId: null,
  createdAt: '2026-11-23T10:00:00.000Z',
  lastUsedAt: '2026-11-24T08:41:07.000Z',
  revokedAt: null,
};

const lead = t.Object({
  id: t.String(),
  email: t.String(),
  verified: t.Boolean(),
  tokenActive: t.Boolean({ description: 'Whether the lead holds a token that authenticates (not revoked)' }),
  createdAt: isoTime(),
  verifiedAt: nullable(isoTime()),
  repeatOf: t.Union([t.String(), t.Null()], { description: 'A repeat sign-up (the address was already registered): the id of its first lead. Null for the first lead of an address.' }),
});

const leadExample = { id: 'lead_01JD8M1N2P3Q4R5S6T7V8W9X0Y', email: 'dev@example.com', verified: true, tokenActive: true, createdAt: '2026-11-23T10:00:00.000Z', verifiedAt: '2026-11-23T11:00:00.000Z', repeatOf: null };

const body = jsonBodyFailures('scopes: Expected array');
const notFound = (what: string): Failure => [404, 'not_found', `no ${what} with id "lead_unknown"`];

export const authDocs = {
  createKey: apiDoc({
    summary: 'Create an API key',
    description: 'The raw key (`key`) is in this answer only; svc stores its hash. A `products:read` key needs a `storeId` (the widget reads that store).',
    tag: 'keys',
    auth: 'admin',
    responses: { 201: { description: 'The new key, with the raw key shown once', schema: t.Composite([keyRecord, t.Object({ key: t.String({ pattern: '^sk_live_[A-Za-z0-9_-]{43}$' }) })]), example: { ...keyExample, lastUsedAt: null, key: 'sk_live_Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg' } } },
    errors: [...body, [400, 'invalid_scopes', 'scopes must be one or more of probe:scan, admin, products:read, dashboard:read, metrics:read'], [400, 'invalid_domain', 'allowedDomains entry "https://x" is not a host name or *.host pattern'], [400, 'unknown_store', 'storeId "st_unknown" names no store'], [400, 'store_required', 'a products:read key is for the FAQ widget, which serves one store: give its storeId (svc keys create --store STORE_ID); admin keys need none']],
    bodyExample: { name: 'probe on CI', scopes: ['probe:scan'] },
  }),
  listKeys: apiDoc({
    summary: 'List API keys',
    description: 'Every key, revoked ones included, oldest first (by creation), with when each was last used. Raw keys are never shown again.',
    tag: 'keys',
    auth: 'admin',
    responses: { 200: { description: 'The keys', schema: t.Object({ items: t.Array(keyRecord) }), example: { items: [keyExample] } } },
  }),
  revokeKey: apiDoc({
    summary: 'Revoke an API key',
    description: 'Takes effect on the next request; revoking twice answers the same record.',
    tag: 'keys',
    auth: 'admin',
    responses: { 200: { description: 'The revoked key', schema: keyRecord, example: { ...keyExample, revokedAt: '2026-11-24T09:00:00.000Z' } } },
    errors: [notFound('API key')],
  }),
  listLeads: apiDoc({
    summary: 'List leads (probe sign-ups)',
    description: 'Newest first, in keyset pages.',
    tag: 'leads',
    auth: 'admin',
    inputs: [
      { name: 'email', in: 'query', description: 'Part of the address, any case (`@example.com` finds a domain’s leads); control and formatting characters are 400', schema: t.String({ minLength: 1, maxLength: 254 }) },
      { name: 'verified', in: 'query', description: 'Only verified (true) or unverified (false) leads', schema: t.Boolean() },
      { name: 'active', in: 'query', description: 'Only leads whose token authenticates (true) or not (false)', schema: t.Boolean() },
      { name: 'cursor', in: 'query', description: '`nextCursor` of the previous page', schema: t.String() },
      { name: 'limit', in: 'query', description: 'Page size, 1 to 500 (default 50)', schema: integer({ minimum: 1, maximum: 500 }) },
    ],
    responses: { 200: { description: 'One page of leads', schema: page(lead), example: { items: [leadExample], nextCursor: null } } },
    errors: [[400, 'invalid_query', 'verified: expected true or false']],
  }),
  verifyLead: apiDoc({
    summary: 'Verify a lead',
    description: 'Its token moves from the anonymous to the verified rate tier.',
    tag: 'leads',
    auth: 'admin',
    responses: { 200: { description: 'The verified lead', schema: lead, example: leadExample } },
    errors: [notFound('lead')],
  }),
  rotateLeadToken: apiDoc({
    summary: 'Issue a lead a new token',
    description: 'The old token stops working at once; the new one is in this answer only.',
    tag: 'leads',
    auth: 'admin',
    responses: { 200: { description: 'The new token', schema: t.Object({ id: t.String(), apiToken: t.String() }), example: { id: leadExample.id, apiToken: 'Qm9vdHN0cmFwVG9rZW5FeGFtcGxlMDEyMzQ1Njc4OWFi' } } },
    errors: [notFound('lead')],
  }),
  revokeLeadToken: apiDoc({
    summary: 'Revoke a lead’s token',
    tag: 'leads',
    auth: 'admin',
    responses: { 200: { description: 'The lead, without an active token', schema: lead, example: { ...leadExample, tokenActive: false } } },
    errors: [notFound('lead')],
  }),
  signUp: apiDoc({
    summary: 'Sign up for a probe token',
    description: 'Makes an unverified lead. The token (mode 1, `X-Probe-Token`) is in this answer only; it sends scans at the anonymous rate until the operator verifies the lead. Every sign-up makes a lead of its own, a known email too (a repeat sign-up, which the operator sees as such; the first lead and its token are untouched), so sign-up never tells whether an address is registered.',
    tag: 'public',
    auth: 'public',
    limit: SIGN_UP_LIMIT,
    responses: { 201: { description: 'The lead’s id and token', schema: t.Object({ id: t.String(), apiToken: t.String() }), example: { id: leadExample.id, apiToken: 'Qm9vdHN0cmFwVG9rZW5FeGFtcGxlMDEyMzQ1Njc4OWFi' } } },
    errors: [
      ...jsonBodyFailures("email: Expected property 'email' to be string but found: 5"),
      [400, 'invalid_email', 'email must be a valid address of at most 254 characters'],
      [400, 'invalid_email', 'email must not contain control or invisible formatting characters (found U+202E)'],
      [429, 'rate_limited', 'the anonymous tier allows 10 sign-ups per minute; retry in 6 s'],
    ],
    bodyExample: { email: 'dev@example.com' },
  }),
};
