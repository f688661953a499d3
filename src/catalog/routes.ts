import { Elysia, t } from 'elysia';
import { orNotFound } from '../lib/errors.ts';
import type { Catalog } from './products.ts';
import { toProductView } from './products.ts';
import type { ProductRow } from '../db/schema/index.ts';
import { isoOrNull } from '../lib/time.ts';
import { catalogDocs as docs } from './docs.ts';

const listQuery = t.Object(
  { cursor: t.Optional(t.String({ maxLength: 64 })), limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })) },
  { additionalProperties: false },
);

/**
 * Read-only view of a store's synced catalogue (admin); `:productId` is the platform's product id.
 * `enrichedAt` says when products were last enriched (each view carries it, null when not enriched).
 */
export function catalogRoutes(catalog: Catalog, storeExists: (id: string) => boolean, enrichedAt: (productRowIds: string[]) => Map<string, number>) {
  const store = (id: string) => orNotFound(storeExists(id) ? id : null, 'store', id);
  const views = (rows: ProductRow[]) => {
    const ids = rows.map((row) => row.id);
    const enriched = enrichedAt(ids);
    const variants = catalog.variantsOf(ids);
    return rows.map((row) => ({ ...toProductView(row, variants.get(row.id) ?? []), enrichedAt: isoOrNull(enriched.get(row.id) ?? null) }));
  };
  return new Elysia({ name: 'catalog', prefix: '/api/v1/admin/stores' })
    .get(
      '/:id/products',
      ({ params, query }) => {
        const page = catalog.list(store(params.id), query.cursor ?? null, query.limit ?? 50);
        return { items: views(page.items), nextCursor: page.nextCursor };
      },
      { params: t.Object({ id: t.String({ maxLength: 64 }) }), query: listQuery, detail: docs.list },
    )
    .get(
      '/:id/products/:productId',
      ({ params }) => views([orNotFound(catalog.get(store(params.id), params.productId), 'product', params.productId)])[0],
      { params: t.Object({ id: t.String({ maxLength: 64 }), productId: t.String({ maxLength: 64 }) }), detail: docs.get },
    );
}
