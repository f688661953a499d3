import { t, type TSchema } from 'elysia';
import { ROUTE_ACCESS, type AccessRule, type Auth } from './access.ts';

// How a route describes itself in the OpenAPI document (/openapi.json, built by src/apidocs). Each
// route passes `detail: apiDoc({...})`: Elysia keeps it as route metadata and never reads it while
// serving, so documentation costs nothing per request. Request schemas (params, query, body) come
// from the route's own validation schemas; `apiDoc` adds what those cannot say: the responses
// (TypeBox schemas, as for `body`), who may call it, and inputs a route parses by hand.

/** The one error shape of every endpoint (src/lib/errors.ts). Some errors add fields (a 429 adds `tier`, `limit`, `retryAfter`). */
export const errorBody = t.Object(
  {
    error: t.String({ description: 'Machine-readable code, stable across versions', examples: ['invalid_request'] }),
    detail: t.String({ description: 'What was wrong and why, for a person' }),
  },
  { additionalProperties: true, title: 'Error' },
);

export type { Auth } from './access.ts';

/** One documented answer. `schema` for JSON bodies; `type` names another media type (text, SVG, …). */
export interface Reply {
  description: string;
  schema?: TSchema;
  /** Media type of the body; `application/json` when a schema is given. No schema and no type: no body. */
  type?: string;
  example?: unknown;
  /** Other media types the same answer may come in (an SVG beside JSON), each with its schema if it is JSON. */
  otherTypes?: (string | { type: string; schema: TSchema })[];
  headers?: Record<string, string>;
}

/** An error a route answers with: `[status, code, detail]` (the detail as the route words it). */
export type Failure = readonly [status: number, code: string, detail: string];

/** A query or header input the route reads by hand (routes with a `query` schema get theirs generated). */
export interface Input {
  name: string;
  in: 'query' | 'header' | 'path';
  description: string;
  schema: TSchema;
  required?: boolean;
}

export interface RouteDoc {
  summary: string;
  description?: string;
  tag: string;
  /** Who may call the route: enforced on the matched route (lib/access.ts) and documented as its security. */
  auth: Auth;
  /** The per-address limit the route draws from before anything else about it runs. */
  limit?: AccessRule['limit'];
  /** Successful answers by status. */
  responses: Record<number, Reply>;
  /** Errors besides those the auth kind implies (401/403/429 are added from `auth`). */
  errors?: Failure[];
  inputs?: Input[];
  /** For routes that read their body themselves (no `body` schema, so Elysia never parses it). */
  body?: { schema?: TSchema; type?: string; description: string; example?: unknown };
  /** An example request body for a route whose `body` schema Elysia validates. */
  bodyExample?: unknown;
}

/** Marker under which `apiDoc` leaves its description for src/apidocs (an OpenAPI extension field). */
export const ROUTE_DOC = 'x-svc-doc';

/**
 * The route's `detail`: summary and tag as OpenAPI fields, the rest under {@link ROUTE_DOC} for the
 * document builder to turn into responses, security and parameters, and its access rule under
 * ROUTE_ACCESS for the app to enforce (lib/access.ts).
 */
export function apiDoc(doc: RouteDoc) {
  const access: AccessRule = doc.limit ? { auth: doc.auth, limit: doc.limit } : { auth: doc.auth };
  return { summary: doc.summary, description: doc.description, tags: [doc.tag], [ROUTE_DOC]: doc, [ROUTE_ACCESS]: access };
}

/** A JSON list page: `{ items, nextCursor }` (null on the last page). */
export const page = (item: TSchema) =>
  t.Object({ items: t.Array(item), nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page' }) });

export const isoTime = (description?: string) => t.String({ format: 'date-time', ...(description ? { description } : {}) });
export const nullable = (schema: TSchema) => t.Union([schema, t.Null()]);
/** A JSON integer (Elysia's t.Integer also admits numeric strings, which an answer never holds). */
export const integer = (options: { minimum?: number; maximum?: number; description?: string } = {}) => t.Unsafe<number>({ type: 'integer', ...options });

/** What a JSON body route answers to a body it cannot take (src/lib/body.ts, Elysia's validation); `invalid` is an example validation detail. */
export const jsonBodyFailures = (invalid: string): Failure[] => [
  [400, 'invalid_request', invalid],
  [400, 'malformed_json', 'request body is not valid JSON: Unexpected end of JSON input'],
  [413, 'payload_too_large', 'request body exceeds the limit of 524288 bytes'],
  [415, 'unsupported_media_type', 'expected Content-Type: application/json, got "text/plain"'],
];
