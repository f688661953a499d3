import { Elysia, t } from 'elysia';
import { orNotFound } from '../lib/errors.ts';
import { entityNames, toEntryView, type CatalogEntries } from './entries.ts';
import { toProductView, type Catalog, type ProductRecord } from './products.ts';
import { isoOrNull } from '../lib/time.ts';
import { catalogDocs as docs, MAX_NAMED_REFS } from './docs.ts';
import { FAQ_ENTITY_TYPES, type FaqEntityType } from '../faqs/types.ts';
import { badParameter } from '../lib/query.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';

/** `?type=&ref=&ref=…` of the titles lookup, read by hand: a ref may hold a comma, which Elysia's query arrays split on. */
function namedRefsQuery(url: string): { type: FaqEntityType; refs: string[] } {
  const params = new URL(url).searchParams;
  for (const name of params.keys()) if (name !== 'type' && name !== 'ref') throw badParameter(name, 'unknown parameter; expected type and ref');
  const type = params.get('type') ?? '';
  if (params.getAll('type').length !== 1 || !(FAQ_ENTITY_TYPES as readonly string[]).includes(type)) throw badParameter('type', `give one of ${FAQ_ENTITY_TYPES.join(', ')}`);
  const refs = [...new Set(params.getAll('ref'))];
  if (refs.length === 0 || refs.length > MAX_NAMED_REFS) throw badParameter('ref', `give 1 to ${MAX_NAMED_REFS} (repeat the parameter)`);
  if (refs.some((ref) => ref.length === 0 || ref.length > 255)) throw badParameter('ref', 'each between 1 and 255 characters');
  return { type: type as FaqEntityType, refs };
}

const listQuery = t.Object(
  { cursor: t.Optional(t.String({ maxLength: 64 })), limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500 })) },
  { additionalProperties: false },
);

/**
 * Read-only view of a store's synced catalogue (admin); `:productId` is the platform's product id.
 * `enrichedAt` says when products were last enriched (each view carries it, null when not enriched).
 * Categories (platform A's collections) and content pages are listed the same way, in sync order.
 */
export function catalogRoutes(catalog: Catalog, entries: CatalogEntries, storeExists: (id: string) => MaybePromise<boolean>, enrichedAt: (productRowIds: string[]) => Promise<Map<string, number>>) {
  const store = async (id: string) => orNotFound((await storeExists(id)) ? id : null, 'store', id);
  const views = async (rows: ProductRecord[]) => {
    const ids = rows.map((row) => row.id);
    const [enriched, variants] = await Promise.all([enrichedAt(ids), catalog.variantsOf(ids)]);
    return rows.map((row) => ({ ...toProductView(row, variants.get(row.id) ?? []), enrichedAt: isoOrNull(enriched.get(row.id) ?? null) }));
  };
  const storeParams = t.Object({ id: t.String({ maxLength: 64 }) });
  const listEntries = (type: 'category' | 'page') => async ({ params, query }: { params: { id: string }; query: { cursor?: string; limit?: number } }) => {
    const page = await entries.list(await store(params.id), type, query.cursor ?? null, query.limit ?? 50);
    return { items: page.items.map(toEntryView), nextCursor: page.nextCursor };
  };
  const names = entityNames(catalog, entries);
  return new Elysia({ name: 'catalog', prefix: '/api/v1/admin/stores' })
    .get(
      '/:id/products',
      async ({ params, query }) => {
        const page = await catalog.list(await store(params.id), query.cursor ?? null, query.limit ?? 50);
        return { items: await views(page.items), nextCursor: page.nextCursor };
      },
      { params: storeParams, query: listQuery, detail: docs.list },
    )
    .get(
      '/:id/titles',
      async ({ params, request }) => {
        const storeId = await store(params.id);
        const { type, refs } = namedRefsQuery(request.url);
        return { items: await names(storeId, type, refs) };
      },
      { params: storeParams, detail: docs.titles },
    )
    .get('/:id/categories', listEntries('category'), { params: storeParams, query: listQuery, detail: docs.categories })
    .get('/:id/pages', listEntries('page'), { params: storeParams, query: listQuery, detail: docs.pages })
    .get(
      '/:id/products/:productId',
      async ({ params }) => (await views([orNotFound(await catalog.get(await store(params.id), params.productId), 'product', params.productId)]))[0],
      { params: t.Object({ id: t.String({ maxLength: 64 }), productId: t.String({ maxLength: 64 }) }), detail: docs.get },
    );
}
