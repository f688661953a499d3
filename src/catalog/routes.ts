import { Elysia, t } from 'elysia';
import { orNotFound } from '../lib/errors.ts';
import type { Catalog } from './products.ts';
import { toProductView } from './products.ts';

const listQuery = t.Object(
  { cursor: t.Optional(t.String({ maxLength: 64 })), limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })) },
  { additionalProperties: false },
);

/** Read-only view of a store's synced catalogue (admin); `:productId` is the platform's product id. */
export function catalogRoutes(catalog: Catalog, storeExists: (id: string) => boolean) {
  const store = (id: string) => orNotFound(storeExists(id) ? id : null, 'store', id);
  return new Elysia({ name: 'catalog', prefix: '/api/v1/admin/stores' })
    .get(
      '/:id/products',
      ({ params, query }) => {
        const page = catalog.list(store(params.id), query.cursor ?? null, query.limit ?? 50);
        return { items: page.items.map(toProductView), nextCursor: page.nextCursor };
      },
      { params: t.Object({ id: t.String({ maxLength: 64 }) }), query: listQuery },
    )
    .get(
      '/:id/products/:productId',
      ({ params }) => toProductView(orNotFound(catalog.get(store(params.id), params.productId), 'product', params.productId)),
      { params: t.Object({ id: t.String({ maxLength: 64 }), productId: t.String({ maxLength: 64 }) }) },
    );
}
