import { Elysia } from 'elysia';
import type { Catalog } from '../catalog/products.ts';
import type { JsonBodyHook } from '../lib/body.ts';
import { orNotFound } from '../lib/errors.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import { enrichmentDocs as docs } from './docs.ts';
import { enrichmentBody, enrichmentParams } from './model.ts';
import { toEnrichmentView, type EnrichmentStore } from './store.ts';

export interface EnrichmentDeps {
  enrichments: EnrichmentStore;
  catalog: Pick<Catalog, 'get'>;
  storeExists: (id: string) => MaybePromise<boolean>;
  jsonBody: JsonBodyHook;
}

/**
 * PUT|GET|DELETE /api/v1/admin/stores/:id/products/:productId/enrichment (each declares the admin scope).
 * `:productId` is the platform's id; the product must be in the synced catalogue (else 404).
 */
export function enrichmentRoutes({ enrichments, catalog, storeExists, jsonBody }: EnrichmentDeps) {
  const product = async (params: { id: string; productId: string }) => {
    orNotFound((await storeExists(params.id)) ? params.id : null, 'store', params.id);
    return orNotFound(await catalog.get(params.id, params.productId), 'product', params.productId);
  };
  return new Elysia({ name: 'enrichment', prefix: '/api/v1/admin/stores/:id/products/:productId/enrichment' })
    .onParse(jsonBody)
    .put('/', async ({ params, body }) => toEnrichmentView(params.productId, await enrichments.put(params.id, (await product(params)).id, body)), { params: enrichmentParams, body: enrichmentBody, detail: docs.put })
    .get('/', async ({ params }) => toEnrichmentView(params.productId, orNotFound(await enrichments.get((await product(params)).id), 'enrichment for product', params.productId)), { params: enrichmentParams, detail: docs.get })
    .delete(
      '/',
      async ({ params, set }) => {
        const row = await product(params);
        if (!(await enrichments.remove(row.id))) orNotFound(null, 'enrichment for product', params.productId);
        set.status = 204;
      },
      { params: enrichmentParams, detail: docs.remove },
    );
}
