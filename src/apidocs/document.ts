import type { AnyElysia, TSchema } from 'elysia';
import { ROUTE_ACCESS } from '../lib/access.ts';
import { errorBody, ROUTE_DOC, type Auth, type Failure, type Reply, type RouteDoc } from '../lib/api-doc.ts';

/**
 * Routes that are not part of the HTTP API and so stay out of the document (the completeness test,
 * test/openapi.test.ts, holds every other route to having `detail: apiDoc(...)`):
 */
export const UNDOCUMENTED_ROUTES: { method: string; path: string; why: string }[] = [
  { method: 'GET', path: '/', why: 'the landing page (HTML for people)' },
  { method: 'POST', path: '/', why: "the landing page's no-JavaScript sign-up form; the API is POST /api/v1/public/leads" },
  { method: 'GET', path: '/console', why: "the console's page shell (HTML)" },
  { method: 'GET', path: '/console/*', why: "the console's page shell for its client-side routes" },
  { method: 'POST', path: '/console/widget-preview', why: "the console's widget builder preview (an HTML form post from the console)" },
  { method: 'GET', path: '/assets/:name', why: 'hashed script and style chunks of the HTML pages' },
  { method: 'GET', path: '/docs/api', why: 'the API reference page itself (HTML)' },
  { method: 'GET', path: '/docs/api/:file', why: "the API reference page's script and style files" },
];

const SECURITY_SCHEMES = {
  adminKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sk_live_…',
    description:
      'An API key (`sk_live_` followed by 43 characters) in `Authorization: Bearer`. Each route names the scope it needs; `admin` implies every scope. Create keys with `svc keys create` or `POST /api/v1/admin/keys`.',
  },
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc_session',
    description:
      'The web console’s session cookie (`__Host-svc_session` when the base URL is https), made by `POST /api/v1/console/session`. It acts with its key’s scopes, and only for requests from svc’s own pages (same Origin). An `Authorization` header wins over the cookie.',
  },
  probeToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Probe-Token',
    description: 'Mode 1: the lead token from sign-up (`POST /api/v1/public/leads`). Rate-limited per lead, at the anonymous rate until the operator verifies the lead.',
  },
  probeKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Probe-Key',
    description: 'Mode 2: an API key with the `probe:scan` scope, sent with `X-Probe-Timestamp` and `X-Probe-Signature`.',
  },
  probeTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Probe-Timestamp',
    description: 'Mode 2: the current time in epoch **milliseconds**; more than 5 minutes from the server clock is refused.',
  },
  probeSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Probe-Signature',
    description: 'Mode 2: lowercase hex HMAC-SHA256 of `<timestamp>.<raw body bytes>`, keyed with the API key itself.',
  },
  widgetKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'A `products:read` key bound to a store; the page’s Origin (or Referer) host must be one of the key’s `allowedDomains`.',
  },
} as const;

const SECURITY: Record<Auth, Record<string, string[]>[]> = {
  public: [],
  webhook: [],
  admin: [{ adminKey: ['admin'] }, { consoleSession: [] }],
  dashboard: [{ adminKey: ['dashboard:read'] }, { consoleSession: [] }],
  metrics: [{ adminKey: ['metrics:read'] }],
  probe: [{ probeToken: [] }, { probeKey: [], probeTimestamp: [], probeSignature: [] }],
  widget: [{ widgetKey: [] }],
  session: [{ consoleSession: [] }, {}],
};

const SCOPED: Failure[] = [
  [401, 'unauthorized', 'missing Authorization header; send Authorization: Bearer sk_live_...'],
  [401, 'invalid_api_key', 'the API key is unknown, malformed or revoked'],
];
const CROSS_SITE: Failure = [403, 'cross_origin_refused', 'the request comes from another site; the console accepts only requests from its own pages'];
const SESSION: Failure[] = [[401, 'session_expired', 'the console session has ended (signed out, idle too long, or its key was revoked); sign in again'], CROSS_SITE];

/** The errors an auth kind brings to every route that uses it. */
const AUTH_FAILURES: Record<Auth, Failure[]> = {
  public: [],
  webhook: [],
  admin: [...SCOPED, [403, 'insufficient_scope', 'this key lacks the admin scope'], ...SESSION],
  dashboard: [...SCOPED, [403, 'insufficient_scope', 'this key lacks the dashboard:read scope'], ...SESSION],
  metrics: [...SCOPED, [403, 'insufficient_scope', 'this key lacks the metrics:read scope']],
  probe: [
    [401, 'missing_credentials', 'send X-Probe-Token, or X-Probe-Key with X-Probe-Timestamp and X-Probe-Signature'],
    [401, 'invalid_token', 'the probe token is unknown, rotated or revoked'],
    [401, 'invalid_signature', 'X-Probe-Signature is not the HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the API key'],
    [401, 'timestamp_out_of_window', 'X-Probe-Timestamp 1767225600 looks like seconds; send epoch milliseconds (1767225600000 now): $(date +%s)000 in a shell, Date.now() in JavaScript'],
    [429, 'rate_limited', 'the verified tier allows 600 scans per minute; retry in 6 s'],
  ],
  widget: [
    [403, 'missing_api_key', 'send the widget key in the X-Api-Key header'],
    [403, 'key_not_bound', 'this key is not bound to a store'],
    [403, 'origin_not_allowed', "the page's domain is not among the key's allowed domains"],
  ],
  session: [CROSS_SITE],
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/**
 * TypeBox schemas are JSON Schema; the round trip drops TypeBox's symbol keys, and OpenAPI 3.0's
 * `nullable` flag that Elysia's t.Nullable adds beside its `anyOf [..., null]` (3.1 has no such keyword).
 */
const jsonSchema = <T>(schema: T): T => JSON.parse(JSON.stringify(schema, (key, value) => (key === 'nullable' && typeof value === 'boolean' ? undefined : value)));

function replyObject(reply: Reply) {
  const headers = reply.headers
    ? Object.fromEntries(Object.entries(reply.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]))
    : undefined;
  const type = reply.type ?? (reply.schema ? 'application/json' : undefined);
  const media: Record<string, object> | undefined = type ? { [type]: { ...(reply.schema ? { schema: jsonSchema(reply.schema) } : {}), ...(reply.example !== undefined ? { example: reply.example } : {}) } } : undefined;
  for (const other of reply.otherTypes ?? []) {
    if (media) media[typeof other === 'string' ? other : other.type] = typeof other === 'string' ? {} : { schema: jsonSchema(other.schema) };
  }
  return { description: reply.description, ...(headers ? { headers } : {}), ...(media ? { content: media } : {}) };
}

function failureResponses(failures: Failure[]) {
  const byStatus = new Map<number, Failure[]>();
  for (const failure of failures) byStatus.set(failure[0], [...(byStatus.get(failure[0]) ?? []), failure]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => {
      const codes = [...new Set(list.map(([, code]) => code))];
      const examples = Object.fromEntries(list.map(([, code, detail]) => [code, { value: { error: code, detail } }]));
      return [status, { description: `Error: ${codes.map((code) => `\`${code}\``).join(', ')}`, content: { 'application/json': { schema: ERROR_REF, examples } } }];
    }),
  );
}

/** `/api/v1/x/:id/` → `/api/v1/x/{id}`: OpenAPI's template syntax, without Elysia's trailing slash of prefixed `/` routes. */
export const openApiPath = (path: string) => (path.length > 1 ? path.replace(/\/$/, '') : path).replace(/:([^/]+)/g, '{$1}');

interface Parameter {
  name: string;
  in: string;
  [field: string]: unknown;
}

/**
 * Elysia's t.Numeric (a query number) is `anyOf [numeric string (default 0), number]`; a reader
 * needs only the number and its bounds (every query value travels as text anyway).
 */
function withoutNumericString(parameter: Parameter): Parameter {
  const anyOf = (parameter.schema as { anyOf?: { format?: string }[] } | undefined)?.anyOf;
  const number = anyOf?.length === 2 && anyOf.some((branch) => branch.format === 'numeric') ? anyOf.find((branch) => branch.format !== 'numeric') : undefined;
  return number ? { ...parameter, schema: number } : parameter;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, unknown>; required?: boolean; description?: string };
  [field: string]: unknown;
}

/** The operation for one documented route: Elysia's generated request side, plus responses, security and hand-read inputs from its RouteDoc. */
function documentedOperation(generated: Operation, doc: RouteDoc, bodySchema: TSchema | undefined): Operation {
  const { [ROUTE_DOC]: _doc, [ROUTE_ACCESS]: _access, ...operation } = generated;
  const parameters = (operation.parameters ?? []).map(withoutNumericString);
  for (const input of doc.inputs ?? []) {
    if (parameters.some((p) => p.name === input.name && p.in === input.in)) continue;
    parameters.push({ name: input.name, in: input.in, required: input.required ?? input.in === 'path', description: input.description, schema: jsonSchema(input.schema) });
  }
  if (parameters.length > 0) operation.parameters = parameters;
  // Routes with their own JSON parse hook come out of the generator with no media type: they take JSON.
  if (bodySchema) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(bodySchema), ...(doc.bodyExample !== undefined ? { example: doc.bodyExample } : {}) } } };
  } else if (doc.body) {
    const type = doc.body.type ?? 'application/json';
    operation.requestBody = {
      required: true,
      description: doc.body.description,
      content: { [type]: { ...(doc.body.schema ? { schema: jsonSchema(doc.body.schema) } : {}), ...(doc.body.example !== undefined ? { example: doc.body.example } : {}) } },
    };
  }
  const responses: Record<string, unknown> = {};
  for (const [status, reply] of Object.entries(doc.responses)) responses[status] = replyObject(reply);
  Object.assign(responses, failureResponses([...AUTH_FAILURES[doc.auth], ...(doc.errors ?? [])]));
  operation.responses = responses;
  operation.security = SECURITY[doc.auth];
  return operation;
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  baseUrl: string;
}

/**
 * The OpenAPI 3.1 document of `app`: @elysiajs/openapi generates each route's parameters and request
 * body from its validation schemas; each route's `apiDoc` detail supplies the rest. Built once by the
 * caller (src/apidocs/routes.ts), never per request; the generator is loaded then, not at every start.
 */
export async function buildApiDocument(app: AnyElysia, info: DocumentInfo) {
  const { toOpenAPISchema } = await import('@elysiajs/openapi');
  const generated = toOpenAPISchema(app, { staticFile: false, methods: [] }, undefined, undefined, '3.1.0') as unknown as { paths: Record<string, Record<string, Operation>> };
  const paths: Record<string, Record<string, Operation>> = {};
  for (const route of app.routes) {
    const doc = (route.hooks?.detail as Record<string, unknown> | undefined)?.[ROUTE_DOC] as RouteDoc | undefined;
    if (!doc) continue;
    const method = route.method.toLowerCase();
    const templated = route.path.replace(/:([^/]+)/g, '{$1}');
    const operation = generated.paths[templated]?.[method] ?? {};
    const path = openApiPath(route.path);
    const body = route.hooks?.body as TSchema | undefined;
    (paths[path] ??= {})[method] = documentedOperation(operation, doc, typeof body === 'object' ? body : undefined);
  }
  return jsonSchema({
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.baseUrl }],
    tags: TAGS,
    paths,
    components: { schemas: { Error: errorBody }, securitySchemes: SECURITY_SCHEMES },
  });
}

export const TAGS = [
  { name: 'probe', description: 'Scan telemetry from the probe and other scanners' },
  { name: 'public', description: 'Sign-up, the widget’s FAQs and scan badges' },
  { name: 'signals', description: 'Public, cacheable product signals and discovery files' },
  { name: 'dashboard', description: 'Scan history and statistics (`dashboard:read`)' },
  { name: 'keys', description: 'API keys (admin)' },
  { name: 'leads', description: 'Probe sign-ups and their tokens (admin)' },
  { name: 'stores', description: 'Connected stores, their catalogue and enrichment (admin)' },
  { name: 'faqs', description: 'FAQ entries (admin)' },
  { name: 'webhooks', description: 'Platform webhook deliveries' },
  { name: 'console', description: 'The web console’s session' },
  { name: 'operations', description: 'Health, metrics, the widget script and this document' },
];
