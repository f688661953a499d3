import { Elysia, t } from 'elysia';
import { orNotFound } from '../lib/errors.ts';
import { toEntryView, type CatalogEntries } from './entries.ts';
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
 * Categories (platform A's collections) and content pages are listed the same way, in sync order.
 */
export function catalogRoutes(catalog: Catalog, entries: CatalogEntries, storeExists: (id: string) => boolean, enrichedAt: (productRowIds: string[]) => Map<string, number>) {
  const store = (id: string) => orNotFound(storeExists(id) ? id : null, 'store', id);
  const views = (rows: ProductRow[]) => {
    const ids = rows.map((row) => row.id);
    const enriched = enrichedAt(ids);
    const variants = catalog.variantsOf(ids);
    return rows.map((row) => ({ ...toProductView(row, variants.get(row.id) ?? []), enrichedAt: isoOrNull(enriched.get(row.id) ?? null) }));
  };
  const storeParams = t.Object({ id: t.String({ maxLength: 64 }) });
  const listEntries = (type: 'category' | 'page') => ({ params, query }: { params: { id: string }; query: { cursor?: string; limit?: number } }) => {
    const page = entries.list(store(params.id), type, query.cursor ?? null, query.limit ?? 50);
    return { items: page.items.map(toEntryView), nextCursor: page.nextCursor };
  };
  return new Elysia({ name: 'catalog', prefix: '/api/v1/admin/stores' })
    .get(
      '/:id/products',
      ({ params, query }) => {
        const page = catalog.list(store(params.id), query.cursor ?? null, query.limit ?? 50);
        return { items: views(page.items), nextCursor: page.nextCursor };
      },
      { params: storeParams, query: listQuery, detail: docs.list },
    )
    .get('/:id/categories', listEntries('category'), { params: storeParams, query: listQuery, detail: docs.categories })
    .get('/:id/pages', listEntries('page'), { params: storeParams, query: listQuery, detail: docs.pages })
    .get(
      '/:id/products/:productId',
      ({ params }) => views([orNotFound(catalog.get(store(params.id), params.productId), 'product', params.productId)])[0],
      { params: t.Object({ id: t.String({ maxLength: 64 }), productId: t.String({ maxLength: 64 }) }), detail: docs.get },
    );
}
