import { Elysia } from 'elysia';
import type { JsonBodyHook } from '../lib/body.ts';
import { parseBoolean, queryParams } from '../lib/query.ts';
import type { createStoreAdmin } from './admin.ts';
import { storeDocs as docs } from './docs.ts';
import { createStoreBody, credentialsBody, storeParams } from './model.ts';

/** Admin store endpoints (DESIGN §5); each route declares the `admin` scope (its apiDoc), which the app enforces. */
export function storeRoutes(admin: ReturnType<typeof createStoreAdmin>, jsonBody: JsonBodyHook) {
  return new Elysia({ name: 'stores', prefix: '/api/v1/admin/stores' })
    .onParse(jsonBody)
    .post(
      '/',
      async ({ body, set }) => {
        const store = await admin.create(body);
        set.status = 201;
        return store;
      },
      { body: createStoreBody, detail: docs.create },
    )
    .get('/', async () => ({ items: await admin.list() }), { detail: docs.list })
    .get('/:id', ({ params }) => admin.get(params.id), { params: storeParams, detail: docs.get })
    .delete('/:id', ({ params, request }) => admin.remove(params.id, parseBoolean('keepData', queryParams(request.url, ['keepData']).get('keepData')) ?? false), { params: storeParams, detail: docs.remove })
    .get('/:id/data', ({ params }) => admin.holdings(params.id), { params: storeParams, detail: docs.holdings })
    .put('/:id/credentials', ({ params, body }) => admin.saveCredentials(params.id, body.credentials, body.currency), { params: storeParams, body: credentialsBody, detail: docs.saveCredentials })
    .post(
      '/:id/sync',
      ({ params, set }) => {
        set.status = 202;
        return admin.sync(params.id);
      },
      { params: storeParams, detail: docs.sync },
    )
    .post('/:id/sync/pause', ({ params }) => admin.pauseSync(params.id), { params: storeParams, detail: docs.pauseSync })
    .post('/:id/sync/resume', ({ params }) => admin.resumeSync(params.id), { params: storeParams, detail: docs.resumeSync })
    .post('/:id/hooks', ({ params }) => admin.registerHooks(params.id), { params: storeParams, detail: docs.registerHooks })
    .get('/:id/settings', ({ params }) => admin.settings(params.id), { params: storeParams, detail: docs.getSettings })
    // The whole document is validated by parseStoreSettings (shared with the CLI), which names the field at fault.
    .put('/:id/settings', ({ params, body }) => admin.saveSettings(params.id, body), { params: storeParams, detail: docs.saveSettings });
}
