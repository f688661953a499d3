import { Elysia } from 'elysia';
import type { StoreRecord } from '../stores/registry.ts';
import type { JsonBodyHook } from '../lib/body.ts';
import { ApiError, errorResponse, orNotFound } from '../lib/errors.ts';
import { matchesIfNoneMatch } from '../lib/http-cache.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { PublicFaqAnswer, PublicFaqs } from './public.ts';
import { faqDocs as docs } from './docs.ts';
import { syncRoute } from '../lib/sync-route.ts';
import { answerInit, appRoute, plainResponse, type AnswerInit, type HotRoute, type Respond } from '../lib/hot-route.ts';
import { createFaqBody, faqParams, listFaqQuery, updateFaqBody } from './model.ts';
import { toFaqView, type FaqStore } from './store.ts';

export interface FaqDeps {
  faqs: FaqStore;
  storeOf: (id: string) => MaybePromise<StoreRecord | null>;
  jsonBody: JsonBodyHook;
}

/** Admin FAQ endpoints (DESIGN §5); each declares the admin scope. An unknown storeId is 404. */
export function adminFaqRoutes({ faqs, storeOf, jsonBody }: FaqDeps) {
  const store = async (id: string) => orNotFound(await storeOf(id), 'store', id);
  const entry = async (id: string) => orNotFound(await faqs.get(id), 'FAQ entry', id);
  return new Elysia({ name: 'faqs-admin', prefix: '/api/v1/admin/faqs' })
    .onParse(jsonBody)
    .post(
      '/',
      async ({ body, set }) => {
        await store(body.storeId);
        set.status = 201;
        return toFaqView(await faqs.create(body));
      },
      { body: createFaqBody, detail: docs.create },
    )
    .get(
      '/',
      async ({ query }) => {
        const storeId = (await store(query.storeId)).id;
        if ((query.entityType === undefined) !== (query.entityRef === undefined)) {
          throw new ApiError(400, 'invalid_query', 'entityType and entityRef: give both (one entity) or neither (the whole store)');
        }
        if (query.entityType !== undefined && query.entityRef !== undefined) {
          if (query.cursor !== undefined) throw new ApiError(400, 'invalid_query', 'cursor: one entity\'s list is not paged');
          const items = (await faqs.listByEntity(storeId, query.entityType, query.entityRef)).filter((row) => query.status === undefined || row.status === query.status);
          return { items: items.map(toFaqView), nextCursor: null };
        }
        const page = await faqs.listByStore(storeId, query.status, query.cursor ?? null, query.limit ?? 100);
        return { items: page.items.map(toFaqView), nextCursor: page.nextCursor };
      },
      { query: listFaqQuery, detail: docs.list },
    )
    .get('/:id', async ({ params }) => toFaqView(await entry(params.id)), { params: faqParams, detail: docs.get })
    .patch(
      '/:id',
      async ({ params, body }) => {
        if (Object.keys(body).length === 0) throw new ApiError(400, 'invalid_request', 'body: name at least one of question, answer, status, position');
        return toFaqView(orNotFound(await faqs.update(params.id, body), 'FAQ entry', params.id));
      },
      { params: faqParams, body: updateFaqBody, detail: docs.update },
    )
    .delete(
      '/:id',
      async ({ params, set }) => {
        if (!(await faqs.remove(params.id))) await entry(params.id);
        set.status = 204;
      },
      { params: faqParams, detail: docs.remove },
    );
}

/**
 * Every preflight's answer, whatever its origin: a preflight cannot carry the key, and answering by
 * origin would tell anyone which domains have a widget key. The GET decides: only a verified origin
 * gets the grant that lets the page read it. `*` is enough, as the widget sends no cookies.
 */
const PREFLIGHT_ANSWER = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET',
  'Access-Control-Allow-Headers': 'X-Api-Key',
  'Access-Control-Max-Age': '600',
};

/**
 * GET /api/v1/public/faqs for the embed widget: key, scope, store binding and origin checked on every
 * request (403 otherwise); CORS echoes the verified origin only. Content depends on the key's store,
 * so shared caches must not share it: `private` and `Vary: Origin, X-Api-Key`.
 */
export function publicFaqRoute(publicFaqs: PublicFaqs): HotRoute {
  // Response headers per answer (one per cached answer and verified origin), built once: a Headers
  // object is copied into a response about three times faster than an object literal is converted.
  const built = new WeakMap<PublicFaqAnswer, { ok: AnswerInit; notModified: AnswerInit }>();
  const headersOf = (answer: PublicFaqAnswer) => {
    let found = built.get(answer);
    if (found === undefined) {
      const headers: Record<string, string> = { Vary: 'Origin, X-Api-Key', ETag: answer.etag, 'Cache-Control': 'private, max-age=60' };
      if (answer.origin) headers['Access-Control-Allow-Origin'] = answer.origin;
      found = { notModified: answerInit(304, headers), ok: answerInit(200, { ...headers, 'Content-Type': 'application/json;charset=utf-8' }) };
      built.set(answer, found);
    }
    return found;
  };
  const responseTo = (request: Request, answer: PublicFaqAnswer, respond: Respond) => {
    const headers = headersOf(answer);
    if (matchesIfNoneMatch(request, answer.etag)) return respond(null, headers.notModified);
    return respond(answer.body, headers.ok);
  };
  const refusal = (error: unknown) => {
    if (error instanceof ApiError) return errorResponse(error.status, error.code, error.detail, { Vary: 'Origin, X-Api-Key', ...error.headers });
    throw error;
  };
  const answer = (request: Request, _params: unknown, respond: Respond): Response | Promise<Response> => {
    try {
      const answer = publicFaqs.answer(request);
      // A key looked up in storage answers later, when `respond` may serve another request: its response is built plainly.
      if (answer instanceof Promise) return answer.then((late) => responseTo(request, late, plainResponse), refusal);
      return responseTo(request, answer, respond);
    } catch (error) {
      return refusal(error);
    }
  };
  return { path: '/api/v1/public/faqs', answer };
}

export function publicFaqRoutes(list: HotRoute) {
  return new Elysia({ name: 'faqs-public', prefix: list.path })
    .options('/', () => new Response(null, { status: 204, headers: PREFLIGHT_ANSWER }), { detail: docs.publicPreflight })
    .get('/', appRoute(list), { detail: docs.publicList });
}
