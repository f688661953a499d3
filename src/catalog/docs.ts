import { t } from 'elysia';
import { apiDoc, isoTime, nullable, page } from '../lib/api-doc.ts';

// OpenAPI descriptions of the catalogue routes (src/catalog/routes.ts).

const text = nullable(t.String());
export const productView = t.Object(
  {
    productId: t.String({ description: 'The platform’s product id' }),
    handle: text,
    title: t.String(),
    descriptionHtml: text,
    descriptionText: text,
    price: nullable(t.String({ description: 'The lowest price (of the variants, when it has several)' })),
    priceMax: text,
    currency: text,
    availability: text,
    sku: text,
    barcode: text,
    gtin: nullable(t.String({ description: 'The barcode when it is a valid GTIN; else null and a warning' })),
    mpn: text,
    brand: text,
    images: t.Array(t.String()),
    url: text,
    options: t.Array(t.String()),
    variants: t.Array(t.Object({ variantId: t.String(), gtin: text }, { additionalProperties: true })),
    warnings: t.Array(t.Object({ code: t.String(), field: t.String(), variantId: text, value: t.String(), reason: t.String(), detail: t.String() })),
    updatedAt: isoTime(),
    syncedAt: isoTime(),
    enrichedAt: nullable(isoTime('When the product was last enriched; null when it is not')),
  },
  { additionalProperties: true },
);

const productExample = {
  productId: '8842',
  handle: 'trail-shoe',
  title: 'Trail shoe',
  descriptionHtml: '<p>Light and grippy.</p>',
  descriptionText: 'Light and grippy.',
  price: '89.00',
  priceMax: '89.00',
  currency: 'EUR',
  availability: 'in_stock',
  sku: 'TS-42',
  barcode: '4006381333931',
  gtin: '4006381333931',
  mpn: null,
  brand: 'Example Outdoor',
  images: ['https://cdn.example.com/ts.jpg'],
  url: 'https://shop.example.com/products/trail-shoe',
  options: [],
  variants: [],
  warnings: [],
  updatedAt: '2026-11-23T10:00:00.000Z',
  syncedAt: '2026-11-23T10:00:02.000Z',
  enrichedAt: null,
};

export const entryView = t.Object({
  id: t.String({ description: 'The platform’s id' }),
  handle: nullable(t.String({ description: 'The handle or slug in its storefront URL' })),
  title: t.String(),
  url: nullable(t.String({ description: 'Its storefront URL, when known' })),
  updatedAt: nullable(isoTime('The platform’s modification time; null where the platform reports none')),
  syncedAt: isoTime(),
});

const entryList = (what: string, example: Record<string, unknown>) =>
  apiDoc({
    summary: `List a store’s synced ${what}`,
    description: `The ${what} svc holds from its catalogue sync (docs/sync.md), in pages, in sync order.`,
    tag: 'stores',
    auth: 'admin',
    responses: { 200: { description: `One page of ${what}`, schema: page(entryView), example: { items: [example], nextCursor: null } } },
    errors: [[400, 'invalid_request', 'limit: Expected number'], [404, 'not_found', 'no store with id "st_unknown"']],
  });

/** References one titles lookup names at most: an FAQ page's worth and more. */
export const MAX_NAMED_REFS = 100;

const namedEntity = t.Object({
  ref: t.String({ description: 'The reference as asked' }),
  id: t.String({ description: 'The platform’s id of what it names' }),
  handle: nullable(t.String()),
  title: t.String(),
  url: nullable(t.String({ description: 'Its storefront URL, when known' })),
});

export const catalogDocs = {
  titles: apiDoc({
    summary: 'Name products, categories or pages by their references',
    description: `What each reference names (an FAQ is filed under a platform id or a handle): the entity’s id, handle, title and storefront URL, in the order asked, one query for all of them. A reference matches a platform id first, then a handle; a reference that names nothing live in the store is left out. At most ${MAX_NAMED_REFS} references.`,
    tag: 'stores',
    auth: 'admin',
    inputs: [
      { name: 'type', in: 'query', required: true, description: 'What the references name', schema: t.Union([t.Literal('product'), t.Literal('category'), t.Literal('page')]) },
      { name: 'ref', in: 'query', required: true, description: 'A platform id or handle; repeat the parameter for each (`?ref=8842&ref=trail-shoe`)', schema: t.Array(t.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: MAX_NAMED_REFS }) },
    ],
    responses: { 200: { description: 'The entities named', schema: t.Object({ items: t.Array(namedEntity) }), example: { items: [{ ref: 'trail-shoe', id: '8842', handle: 'trail-shoe', title: 'Trail shoe', url: 'https://shop.example.com/products/trail-shoe' }] } } },
    errors: [[400, 'invalid_query', 'type: give one of product, category, page'], [404, 'not_found', 'no store with id "st_unknown"']],
  }),
  categories: entryList('categories (collections)', { id: '4412', handle: 'trail', title: 'Trail', url: 'https://shop.example.com/collections/trail', updatedAt: '2026-11-23T10:00:00.000Z', syncedAt: '2026-11-23T10:00:02.000Z' }),
  pages: entryList('content pages', { id: '118', handle: 'shipping', title: 'Shipping & returns', url: 'https://shop.example.com/pages/shipping', updatedAt: '2026-11-23T10:00:00.000Z', syncedAt: '2026-11-23T10:00:02.000Z' }),
  list: apiDoc({
    summary: 'List a store’s synced products',
    description: 'The catalogue svc holds from the platform’s webhooks, in pages.',
    tag: 'stores',
    auth: 'admin',
    responses: { 200: { description: 'One page of products', schema: page(productView), example: { items: [productExample], nextCursor: null } } },
    errors: [[400, 'invalid_request', 'limit: Expected number'], [404, 'not_found', 'no store with id "st_unknown"']],
  }),
  get: apiDoc({
    summary: 'Get one synced product',
    tag: 'stores',
    auth: 'admin',
    responses: { 200: { description: 'The product', schema: productView, example: productExample } },
    errors: [[404, 'not_found', 'no product with id "8842"']],
  }),
};
