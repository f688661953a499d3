/**
 * Realistic payloads in the shapes the platforms send (platforms.md), with readable default products:
 * for each platform one multi-variant and one single-variant product. Barcodes are valid GTINs unless
 * a test overrides them.
 */

const LONG_DESCRIPTION =
  '<p>Hand-finished <strong>waxed canvas</strong> tote with vegetable-tanned leather handles.</p>' +
  '<ul><li>Water resistant</li><li>Brass rivets &amp; hardware</li><li>Interior zip pocket</li></ul>' +
  '<p>Each bag is cut and stitched in our workshop; small variations in colour are part of the charm.</p>';

type AVariantOverrides = Partial<{ price: string; compare_at_price: string | null; barcode: string | null; sku: string; inventory_quantity: number; inventory_policy: string; inventory_management: string | null }>;

/** One variant of platform A's REST Product resource (API version 2025-01). */
function platformAVariant(productId: number, n: number, fields: { title: string; options: (string | null)[]; price: string; compareAt: string | null; sku: string; barcode: string | null; quantity: number; imageId: number | null }, updatedAt: string) {
  return {
    id: productId * 10 + n,
    product_id: productId,
    title: fields.title,
    price: fields.price,
    position: n + 1,
    inventory_policy: 'deny',
    compare_at_price: fields.compareAt,
    option1: fields.options[0] ?? null,
    option2: fields.options[1] ?? null,
    option3: fields.options[2] ?? null,
    created_at: '2025-12-01T09:00:00-05:00',
    updated_at: updatedAt,
    taxable: true,
    barcode: fields.barcode,
    fulfillment_service: 'manual',
    grams: 900,
    inventory_management: 'platform-a',
    requires_shipping: true,
    sku: fields.sku,
    weight: 0.9,
    weight_unit: 'kg',
    inventory_item_id: productId * 100 + n,
    inventory_quantity: fields.quantity,
    old_inventory_quantity: fields.quantity,
    admin_graphql_api_id: `gid://platform-a/ProductVariant/${productId * 10 + n}`,
    image_id: fields.imageId,
  };
}

/**
 * Platform A's REST Product resource as sent with products/create and products/update (~4 KB): a
 * tote in three colours. Olive and Navy cost 89.00 (was 99.00), Sand 99.00; Navy is sold out.
 */
export function platformAProduct(
  id: number,
  overrides: { title?: string; updatedAt?: string; price?: string; inventory?: number; variants?: AVariantOverrides[] } = {},
) {
  const updatedAt = overrides.updatedAt ?? '2026-01-10T10:00:00-05:00';
  const colours = ['Olive', 'Navy', 'Sand'];
  const defaults = [
    { price: '89.00', compareAt: '99.00', barcode: '4006381333931', quantity: 12 },
    { price: '89.00', compareAt: '99.00', barcode: '4006381333948', quantity: 0 },
    { price: '99.00', compareAt: null, barcode: '4006381333955', quantity: 5 },
  ];
  const variants = colours.map((colour, n) => {
    const base = platformAVariant(
      id,
      n,
      {
        title: colour,
        options: [colour],
        price: overrides.price ?? defaults[n]!.price,
        compareAt: defaults[n]!.compareAt,
        sku: `TOTE-${id}-${colour.toUpperCase()}`,
        barcode: defaults[n]!.barcode,
        quantity: overrides.inventory ?? defaults[n]!.quantity,
        imageId: id * 1000 + n,
      },
      updatedAt,
    );
    return { ...base, ...overrides.variants?.[n] };
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
    template_suffix: null,
    published_scope: 'global',
    admin_graphql_api_id: `gid://platform-a/Product/${id}`,
    options: [{ id: id + 1, product_id: id, name: 'Color', position: 1, values: colours }],
    variants,
    images: [0, 1, 2].map((n) => ({
      id: id * 1000 + n,
      product_id: id,
      position: n + 1,
      alt: `Waxed canvas tote in ${colours[n]}`,
      width: 2048,
      height: 2048,
      src: `https://cdn.platform-a.example/files/tote-${id}-${n}.jpg?v=1736521200`,
      variant_ids: [id * 10 + n],
    })),
    image: { id: id * 1000, src: `https://cdn.platform-a.example/files/tote-${id}-0.jpg?v=1736521200` },
  };
}

/** A platform-A product without options: the platform still sends one `Default Title` variant. */
export function platformASimpleProduct(id: number, overrides: { barcode?: string | null; updatedAt?: string } = {}) {
  const updatedAt = overrides.updatedAt ?? '2026-01-10T10:00:00-05:00';
  const variant = platformAVariant(
    id,
    0,
    { title: 'Default Title', options: ['Default Title'], price: '35.00', compareAt: null, sku: `CARD-${id}`, barcode: overrides.barcode === undefined ? '0036000291452' : overrides.barcode, quantity: 40, imageId: null },
    updatedAt,
  );
  return {
    id,
    title: 'Leather Card Holder',
    body_html: '<p>Slim card holder in <em>full-grain</em> leather.</p>',
    vendor: 'Northwind Goods',
    product_type: 'Accessories',
    handle: 'leather-card-holder',
    status: 'active',
    tags: 'leather',
    created_at: '2025-12-01T09:00:00-05:00',
    updated_at: updatedAt,
    published_at: '2025-12-01T09:00:00-05:00',
    admin_graphql_api_id: `gid://platform-a/Product/${id}`,
    options: [{ id: id + 1, product_id: id, name: 'Title', position: 1, values: ['Default Title'] }],
    variants: [variant],
    images: [{ id: id * 1000, product_id: id, position: 1, alt: null, width: 1600, height: 1600, src: `https://cdn.platform-a.example/files/card-${id}.jpg`, variant_ids: [] }],
    image: { id: id * 1000, src: `https://cdn.platform-a.example/files/card-${id}.jpg` },
  };
}

/** One variant of platform B's catalog API (`include=variants`). */
function platformBVariant(productId: number, n: number, fields: { sku: string; price: number | null; calculated: number; options: [string, string][]; gtin: string; upc: string; mpn: string; level: number }) {
  return {
    id: productId * 10 + n,
    product_id: productId,
    sku: fields.sku,
    sku_id: productId * 100 + n,
    price: fields.price,
    calculated_price: fields.calculated,
    sale_price: null,
    retail_price: null,
    map_price: null,
    weight: 0.8,
    calculated_weight: 0.8,
    width: 0,
    height: 0,
    depth: 0,
    is_free_shipping: false,
    fixed_cost_shipping_price: null,
    purchasing_disabled: false,
    purchasing_disabled_message: '',
    image_url: '',
    cost_price: 40,
    upc: fields.upc,
    mpn: fields.mpn,
    gtin: fields.gtin,
    inventory_level: fields.level,
    inventory_warning_level: 0,
    bin_picking_number: '',
    option_values: fields.options.map(([name, label], i) => ({ id: 100 + n * 10 + i, label, option_id: 10 + i, option_display_name: name })),
  };
}

/** Platform B's catalog API product (`data` of GET /v3/catalog/products/{id}?include=images,variants,...): one base variant, no options. */
export function platformBProduct(id: number, overrides: { name?: string; dateModified?: string; price?: number } = {}) {
  const price = overrides.price ?? 120;
  return {
    id,
    name: overrides.name ?? 'Trail Runner 2',
    type: 'physical',
    sku: `TR2-${id}`,
    description: '<p>Lightweight trail shoe with a <em>grippy</em> outsole.</p>',
    price,
    cost_price: 60,
    retail_price: 0,
    sale_price: 0,
    calculated_price: price,
    brand_id: 37,
    inventory_level: 25,
    inventory_tracking: 'product',
    availability: 'available',
    is_visible: true,
    upc: '012345678905',
    gtin: '',
    mpn: `TR2-M-${id}`,
    date_modified: overrides.dateModified ?? '2026-01-10T15:00:00+00:00',
    custom_url: { url: '/trail-runner-2/', is_customized: false },
    base_variant_id: id * 10,
    images: [{ id: 1, is_thumbnail: true, url_standard: `https://cdn.platform-b.example/${id}/std.jpg`, url_zoom: `https://cdn.platform-b.example/${id}/zoom.jpg` }],
    variants: [platformBVariant(id, 0, { sku: `TR2-${id}`, price: null, calculated: price, options: [], gtin: '', upc: '012345678905', mpn: `TR2-M-${id}`, level: 25 })],
    custom_fields: [],
  };
}

/** A platform-B product with Size and Color options and variant-level inventory: four variants, L costs more, M/Forest is sold out. */
export function platformBVariantProduct(id: number, overrides: { dateModified?: string } = {}) {
  const combos: [string, string, number, string][] = [
    ['S', 'Forest', 64, '5012345678900'],
    ['M', 'Forest', 64, '5012345678917'],
    ['L', 'Forest', 69, '5012345678924'],
    ['M', 'Slate', 64, '5012345678931'],
  ];
  return {
    ...platformBProduct(id, { name: 'Alpine Fleece', dateModified: overrides.dateModified, price: 64 }),
    sku: `FLEECE-${id}`,
    description: '<p>Warm <strong>recycled</strong> fleece.</p>',
    upc: '',
    mpn: '',
    inventory_tracking: 'variant',
    inventory_level: 0,
    custom_url: { url: '/alpine-fleece/', is_customized: false },
    variants: combos.map(([size, colour, calculated, gtin], n) =>
      platformBVariant(id, n, { sku: `FLEECE-${id}-${size}-${colour.toUpperCase()}`, price: calculated === 64 ? null : calculated, calculated, options: [['Size', size], ['Color', colour]], gtin, upc: '', mpn: `AF-${size}-${colour}`, level: size === 'M' && colour === 'Forest' ? 0 : 7 }),
    ),
  };
}

/** Platform C's v3 REST product, as built at delivery time for product.created / product.updated (a simple product). */
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
    on_sale: false,
    stock_status: 'instock',
    stock_quantity: 8,
    manage_stock: true,
    categories: [{ id: 9, name: 'Coffee', slug: 'coffee' }],
    tags: [],
    images: [{ id: 31, src: `${siteUrl}/wp-content/uploads/pour-over.jpg`, name: 'pour-over', alt: 'Pour-over set' }],
    attributes: [],
    variations: [],
    meta_data: [],
  };
}

/**
 * A variable platform-C product (the payload names its variations only by id) and its variations as
 * `GET /products/{id}/variations` returns them: an apron by Material and Pattern (the Size attribute
 * is not used for variations). Cotton/Check is on sale and sold out.
 */
export function platformCVariableProduct(id: number, siteUrl: string, overrides: { modifiedGmt?: string } = {}) {
  const modified = overrides.modifiedGmt ?? '2026-01-10T12:00:00';
  const product = {
    ...platformCProduct(id, siteUrl, { name: 'Kitchen Apron', modifiedGmt: modified, price: '42.00' }),
    slug: 'kitchen-apron',
    permalink: `${siteUrl}/product/kitchen-apron/`,
    type: 'variable',
    description: '<p>Apron with a <strong>cross-back</strong> strap.</p>',
    sku: `APRON-${id}`,
    global_unique_id: '',
    regular_price: '',
    stock_status: 'instock',
    stock_quantity: null,
    manage_stock: false,
    attributes: [
      { id: 3, name: 'Size', slug: 'pa_size', position: 2, visible: true, variation: false, options: ['One size'] },
      { id: 1, name: 'Material', slug: 'pa_material', position: 0, visible: true, variation: true, options: ['Linen', 'Cotton'] },
      { id: 2, name: 'Pattern', slug: 'pa_pattern', position: 1, visible: true, variation: true, options: ['Stripe', 'Check'] },
    ],
    variations: [id * 10 + 1, id * 10 + 2],
  };
  const variation = (n: number, material: string, pattern: string, fields: { price: string; regular: string; sale: string; stock: string; gtin: string }) => ({
    id: id * 10 + n,
    parent_id: id,
    type: 'variation',
    date_created_gmt: '2025-11-02T08:00:00',
    date_modified_gmt: modified,
    description: '',
    permalink: `${siteUrl}/product/kitchen-apron/?attribute_pa_material=${material.toLowerCase()}&attribute_pa_pattern=${pattern.toLowerCase()}`,
    sku: `APRON-${id}-${material.toUpperCase()}-${pattern.toUpperCase()}`,
    global_unique_id: fields.gtin,
    price: fields.price,
    regular_price: fields.regular,
    sale_price: fields.sale,
    on_sale: fields.sale !== '',
    status: 'publish',
    purchasable: true,
    stock_status: fields.stock,
    stock_quantity: fields.stock === 'instock' ? 6 : 0,
    manage_stock: true,
    image: { id: 40 + n, src: `${siteUrl}/wp-content/uploads/apron-${material.toLowerCase()}.jpg`, name: `apron-${material}`, alt: '' },
    attributes: [
      { id: 1, name: 'Material', slug: 'pa_material', option: material },
      { id: 2, name: 'Pattern', slug: 'pa_pattern', option: pattern },
    ],
    menu_order: n,
    meta_data: [],
  });
  const variations = [
    variation(1, 'Linen', 'Stripe', { price: '42.00', regular: '42.00', sale: '', stock: 'instock', gtin: '0012345678905' }),
    variation(2, 'Cotton', 'Check', { price: '36.00', regular: '45.00', sale: '36.00', stock: 'outofstock', gtin: '0614141000036' }),
  ];
  return { product, variations };
}

/** Categories and content pages for catalogue sync: the list items each platform's API returns. */

/** Platform A's collection (REST-ish fields; the fake serves it as a GraphQL `collections` node). */
export function platformACollection(id: number, overrides: { title?: string; handle?: string; updatedAt?: string } = {}) {
  return { id, handle: overrides.handle ?? `collection-${id}`, title: overrides.title ?? `Collection ${id}`, updated_at: overrides.updatedAt ?? '2026-01-10T10:00:00-05:00' };
}

/** Platform A's online store page (served as a GraphQL `pages` node). */
export function platformAPage(id: number, overrides: { title?: string; handle?: string; updatedAt?: string } = {}) {
  return { id, handle: overrides.handle ?? `page-${id}`, title: overrides.title ?? `Page ${id}`, updated_at: overrides.updatedAt ?? '2026-01-10T10:00:00-05:00' };
}

/** Platform B's v3 catalog category (`GET /v3/catalog/categories`). */
export function platformBCategory(id: number, overrides: { name?: string; path?: string } = {}) {
  return {
    id,
    parent_id: 0,
    name: overrides.name ?? `Category ${id}`,
    description: '<p>Our range.</p>',
    views: 0,
    sort_order: 0,
    page_title: '',
    meta_keywords: [''],
    meta_description: '',
    layout_file: 'category.html',
    image_url: '',
    is_visible: true,
    search_keywords: '',
    default_product_sort: 'use_store_settings',
    custom_url: { url: overrides.path ?? `/category-${id}/`, is_customized: false },
  };
}

/** Platform B's content page (`GET /v3/content/pages`). */
export function platformBPage(id: number, overrides: { name?: string; path?: string } = {}) {
  return {
    id,
    channel_id: 1,
    name: overrides.name ?? `Page ${id}`,
    is_visible: true,
    parent_id: 0,
    sort_order: 0,
    type: 'page',
    is_homepage: false,
    is_customers_only: false,
    url: overrides.path ?? `/page-${id}/`,
    meta_title: '',
    meta_keywords: '',
    meta_description: '',
    search_keywords: '',
    body: '<p>Content.</p>',
  };
}

/** Platform C's product category (`GET wc/v3/products/categories`): names come HTML-escaped. */
export function platformCCategory(id: number, siteUrl: string, overrides: { name?: string; slug?: string } = {}) {
  return {
    id,
    name: overrides.name ?? `Category ${id}`,
    slug: overrides.slug ?? `category-${id}`,
    parent: 0,
    description: '',
    display: 'default',
    image: null,
    menu_order: 0,
    count: 3,
    _links: { self: [{ href: `${siteUrl}/wp-json/wc/v3/products/categories/${id}` }], collection: [{ href: `${siteUrl}/wp-json/wc/v3/products/categories` }] },
  };
}

/** A page of the site (`GET wp/v2/pages`): the title is rendered HTML. */
export function platformCPage(id: number, siteUrl: string, overrides: { title?: string; slug?: string; modifiedGmt?: string } = {}) {
  const slug = overrides.slug ?? `page-${id}`;
  return {
    id,
    date: '2025-11-02T09:00:00',
    date_gmt: '2025-11-02T08:00:00',
    guid: { rendered: `${siteUrl}/?page_id=${id}` },
    modified: overrides.modifiedGmt ?? '2026-01-10T13:00:00',
    modified_gmt: overrides.modifiedGmt ?? '2026-01-10T12:00:00',
    slug,
    status: 'publish',
    type: 'page',
    link: `${siteUrl}/${slug}/`,
    title: { rendered: overrides.title ?? `Page ${id}` },
    content: { rendered: '<p>Content.</p>', protected: false },
    excerpt: { rendered: '<p>Content.</p>', protected: false },
    author: 1,
    parent: 0,
    menu_order: 0,
    template: '',
  };
}
