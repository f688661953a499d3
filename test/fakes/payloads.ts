/** Realistic payloads in the shapes the platforms send (platforms.md), with a readable default product. */

const LONG_DESCRIPTION =
  '<p>Hand-finished <strong>waxed canvas</strong> tote with vegetable-tanned leather handles.</p>' +
  '<ul><li>Water resistant</li><li>Brass rivets &amp; hardware</li><li>Interior zip pocket</li></ul>' +
  '<p>Each bag is cut and stitched in our workshop; small variations in colour are part of the charm.</p>';

/** Platform A's REST Product resource as sent with products/create and products/update (~3 KB). */
export function platformAProduct(id: number, overrides: { title?: string; updatedAt?: string; price?: string; inventory?: number } = {}) {
  const updatedAt = overrides.updatedAt ?? '2026-01-10T10:00:00-05:00';
  const variant = (n: number) => ({
    id: id * 10 + n,
    product_id: id,
    title: ['Olive', 'Navy', 'Sand'][n] ?? 'Default',
    price: overrides.price ?? '89.00',
    compare_at_price: '99.00',
    sku: `TOTE-${id}-${n}`,
    barcode: `400638133393${n}`,
    position: n + 1,
    inventory_quantity: overrides.inventory ?? 12,
    inventory_item_id: id * 100 + n,
    option1: ['Olive', 'Navy', 'Sand'][n] ?? 'Default',
    created_at: '2025-12-01T09:00:00-05:00',
    updated_at: updatedAt,
  });
  return {
    id,
    title: overrides.title ?? 'Waxed Canvas Tote',
    body_html: LONG_DESCRIPTION,
    vendor: 'Northwind Goods',
    product_type: 'Bags',
    handle: 'waxed-canvas-tote',
    status: 'active',
    tags: 'bags, canvas, gifts',
    created_at: '2025-12-01T09:00:00-05:00',
    updated_at: updatedAt,
    published_at: '2025-12-01T09:00:00-05:00',
    admin_graphql_api_id: `gid://platform-a/Product/${id}`,
    options: [{ id: id + 1, product_id: id, name: 'Color', position: 1, values: ['Olive', 'Navy', 'Sand'] }],
    variants: [variant(0), variant(1), variant(2)],
    images: [0, 1, 2].map((n) => ({
      id: id * 1000 + n,
      product_id: id,
      position: n + 1,
      alt: `Waxed canvas tote, view ${n + 1}`,
      width: 2048,
      height: 2048,
      src: `https://cdn.platform-a.example/files/tote-${id}-${n}.jpg?v=1736521200`,
      variant_ids: [],
    })),
    image: { id: id * 1000, src: `https://cdn.platform-a.example/files/tote-${id}-0.jpg?v=1736521200` },
  };
}

/** Platform B's catalog API product (`data` of GET /v3/catalog/products/{id}?include=images,...). */
export function platformBProduct(id: number, overrides: { name?: string; dateModified?: string; price?: number } = {}) {
  return {
    id,
    name: overrides.name ?? 'Trail Runner 2',
    type: 'physical',
    sku: `TR2-${id}`,
    description: '<p>Lightweight trail shoe with a <em>grippy</em> outsole.</p>',
    price: overrides.price ?? 120,
    cost_price: 60,
    retail_price: 0,
    sale_price: 0,
    calculated_price: overrides.price ?? 120,
    brand_id: 37,
    inventory_level: 25,
    inventory_tracking: 'product',
    availability: 'available',
    is_visible: true,
    upc: '012345678905',
    gtin: '',
    date_modified: overrides.dateModified ?? '2026-01-10T15:00:00+00:00',
    custom_url: { url: '/trail-runner-2/', is_customized: false },
    base_variant_id: id * 10,
    images: [{ id: 1, is_thumbnail: true, url_standard: `https://cdn.platform-b.example/${id}/std.jpg`, url_zoom: `https://cdn.platform-b.example/${id}/zoom.jpg` }],
    variants: [{ id: id * 10, product_id: id, sku: `TR2-${id}`, price: null }],
    custom_fields: [],
  };
}

/** Platform C's v3 REST product, as built at delivery time for product.created / product.updated. */
export function platformCProduct(id: number, siteUrl: string, overrides: { name?: string; modifiedGmt?: string; price?: string } = {}) {
  return {
    id,
    name: overrides.name ?? 'Ceramic Pour-Over Set',
    slug: 'ceramic-pour-over-set',
    permalink: `${siteUrl}/product/ceramic-pour-over-set/`,
    type: 'simple',
    status: 'publish',
    date_created_gmt: '2025-11-02T08:00:00',
    date_modified: overrides.modifiedGmt ?? '2026-01-10T12:00:00',
    date_modified_gmt: overrides.modifiedGmt ?? '2026-01-10T12:00:00',
    description: '<p>Dripper, carafe &amp; two cups.</p>',
    short_description: '<p>Pour-over set</p>',
    sku: `POUR-${id}`,
    global_unique_id: '0799439112766',
    price: overrides.price ?? '64.00',
    regular_price: overrides.price ?? '64.00',
    sale_price: '',
    stock_status: 'instock',
    stock_quantity: 8,
    categories: [{ id: 9, name: 'Coffee', slug: 'coffee' }],
    tags: [],
    images: [{ id: 31, src: `${siteUrl}/wp-content/uploads/pour-over.jpg`, name: 'pour-over', alt: 'Pour-over set' }],
    attributes: [],
    variations: [],
    meta_data: [],
  };
}
