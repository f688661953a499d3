import { Elysia } from 'elysia';
import type { JsonBodyHook } from '../lib/body.ts';
import { orNotFound as found } from '../lib/errors.ts';
import { encodeKeysetCursor, parseBoolean, parseKeysetCursor, parseLimit, queryParams } from '../lib/query.ts';
import type { KeyStore } from './keys.ts';
import type { LeadStore } from './leads.ts';
import { authDocs as docs } from './docs.ts';
import { createKeyBody, idParams, signUpBody } from './model.ts';

interface AuthDeps {
  keys: KeyStore;
  leads: LeadStore;
  jsonBody: JsonBodyHook;
}

/** Admin key and lead management; each route declares the `admin` scope (its apiDoc), which the app enforces. */
export function adminAuthRoutes({ keys, leads, jsonBody }: AuthDeps) {
  return new Elysia({ prefix: '/api/v1/admin' })
    .onParse(jsonBody)
    .post(
      '/keys',
      async ({ body, set }) => {
        const { key, record } = await keys.create(body);
        set.status = 201;
        return { ...record, key };
      },
      { body: createKeyBody, detail: docs.createKey },
    )
    .get('/keys', async () => ({ items: await keys.list() }), { detail: docs.listKeys })
    .delete('/keys/:id', async ({ params }) => found(await keys.revoke(params.id), 'API key', params.id), { params: idParams, detail: docs.revokeKey })
    .get('/leads', async ({ request }) => {
      const query = queryParams(request.url, ['email', 'verified', 'active', 'cursor', 'limit']);
      const filter = { email: query.get('email'), verified: parseBoolean('verified', query.get('verified')), active: parseBoolean('active', query.get('active')) };
      const page = await leads.list(filter, parseKeysetCursor(query.get('cursor')), parseLimit(query.get('limit')));
      return { items: page.items, nextCursor: page.next ? encodeKeysetCursor(page.next) : null };
    }, { detail: docs.listLeads })
    .post('/leads/:id/verify', async ({ params }) => found(await leads.verify(params.id), 'lead', params.id), { params: idParams, detail: docs.verifyLead })
    .post(
      '/leads/:id/rotate-token',
      async ({ params }) => ({ id: params.id, apiToken: found(await leads.rotate(params.id), 'lead', params.id) }),
      { params: idParams, detail: docs.rotateLeadToken },
    )
    .post('/leads/:id/revoke-token', async ({ params }) => found(await leads.revoke(params.id), 'lead', params.id), {
      params: idParams,
      detail: docs.revokeLeadToken,
    });
}

/** Public sign-up: a new unverified lead and its token, shown once; a known email gets the same (see `LeadStore.signUp`). */
export function publicLeadRoutes({ leads, jsonBody }: Omit<AuthDeps, 'keys'>) {
  return new Elysia({ prefix: '/api/v1/public' }).onParse(jsonBody).post(
    '/leads',
    async ({ body, set }) => {
      const { id, apiToken } = await leads.signUp(body.email);
      set.status = 201;
      return { id, apiToken };
    },
    { body: signUpBody, detail: docs.signUp },
  );
}
