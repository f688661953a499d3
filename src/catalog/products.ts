import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { productVariants, products, type ProductRow, type ProductVariantRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { checkGtin, validGtin } from '../lib/gtin.ts';
import { htmlToPlainText } from '../lib/html.ts';
import { newId } from '../lib/ids.ts';
import { keysetPage } from '../lib/query.ts';
import type { ProductData, ProductVariant } from '../platforms/types.ts';
import { unlistedChunk, type UnlistedChunk } from './sweep.ts';

export type UpsertOutcome = 'applied' | 'stale';
export type RemoveOutcome = 'removed' | 'stale';

/** A variant as the admin API shows it: as synced, plus the GTIN its barcode yields (null when invalid or absent). */
export interface VariantView extends ProductVariant {
  gtin: string | null;
}

/** Something about a product's data that svc will not publish as sent (the console shows these). */
export interface ProductWarning {
  code: 'invalid_gtin';
  /** `barcode`, or `variants[<variantId>].barcode`. */
  field: string;
  variantId: string | null;
  /** The value as the platform sent it. */
  value: string;
  reason: string;
  detail: string;
}

/** A product as the admin API shows it; `productId` is always the platform's id. */
export interface ProductView {
  productId: string;
  handle: string | null;
  title: string;
  descriptionHtml: string | null;
  descriptionText: string | null;
  /** The lowest price (of the variants, when it has several). */
  price: string | null;
  /** The highest variant price; equal to `price` unless the variants' prices differ. */
  priceMax: string | null;
  currency: string | null;
  availability: string | null;
  sku: string | null;
  barcode: string | null;
  gtin: string | null;
  mpn: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  options: string[];
  variants: VariantView[];
  warnings: ProductWarning[];
  updatedAt: string;
  syncedAt: string;
}

export function toVariant(row: ProductVariantRow): ProductVariant {
  const { productRowId: _row, position: _position, ...variant } = row;
  return variant;
}

/** Barcodes that are not valid GTINs: never published, reported on the product instead. */
export function productWarnings(barcode: string | null, variants: ProductVariant[]): ProductWarning[] {
  const warnings: ProductWarning[] = [];
  const check = (value: string | null, field: string, variantId: string | null) => {
    if (value === null || value.trim() === '') return;
    const result = checkGtin(value);
    if (!result.valid) warnings.push({ code: 'invalid_gtin', field, variantId, value, reason: result.reason, detail: `${field} ${JSON.stringify(value)} is not published as a GTIN: ${result.detail}` });
  };
  check(barcode, 'barcode', null);
  for (const variant of variants) check(variant.barcode, `variants[${variant.variantId}].barcode`, variant.variantId);
  return warnings;
}

const highestPrice = (prices: (string | null)[]): string | null =>
  prices.reduce<string | null>((high, p) => (p !== null && (high === null || Number(p) > Number(high)) ? p : high), null);

export function toProductView(row: ProductRow, variants: ProductVariant[]): ProductView {
  return {
    productId: row.productId,
    handle: row.handle,
    title: row.title,
    descriptionHtml: row.descriptionHtml,
    descriptionText: row.descriptionText,
    price: row.price,
    priceMax: highestPrice(variants.map((v) => v.price)) ?? row.price,
    currency: row.currency,
    availability: row.availability,
    sku: row.sku,
    barcode: row.barcode,
    gtin: validGtin(row.barcode),
    mpn: row.mpn,
    brand: row.brand,
    images: row.images,
    url: row.url,
    options: row.options,
    variants: variants.map((v) => ({ ...v, gtin: validGtin(v.barcode) })),
    warnings: productWarnings(row.barcode, variants),
    updatedAt: new Date(row.platformUpdatedAt).toISOString(),
    syncedAt: new Date(row.syncedAt).toISOString(),
  };
}

/**
 * The synced catalogue. Ordering rule for every write: the platform's own modification time wins,
 * so retries and reordered deliveries converge on the newest state whatever order they arrive in.
 */
export function createCatalog(db: Db, clock: Clock) {
  const dataColumns = ['handle', 'title', 'descriptionHtml', 'descriptionText', 'price', 'currency', 'availability', 'sku', 'barcode', 'mpn', 'brand', 'images', 'url', 'options', 'platformUpdatedAt', 'raw', 'removedAt', 'syncedAt'] as const;
  const placeholders = Object.fromEntries(dataColumns.map((c) => [c, sql.placeholder(c)])) as Record<(typeof dataColumns)[number], ReturnType<typeof sql.placeholder>>;
  // Prepared once: the webhook hot path (drizzle still applies the JSON columns' encoding to placeholders).
  const upsertStatement = db
    .insert(products)
    .values({ id: sql.placeholder('id'), storeId: sql.placeholder('storeId'), productId: sql.placeholder('productId'), createdAt: sql.placeholder('syncedAt'), ...placeholders })
    .onConflictDoUpdate({
      target: [products.storeId, products.productId],
      // synced_at only moves forward, by at least 1 ms per applied write: it doubles as the row's version
      // stamp (the signals capability keys its rendered output on it).
      set: Object.fromEntries(
        dataColumns.map((c) => [c, c === 'syncedAt' ? sql.raw('max(excluded.synced_at, products.synced_at + 1)') : sql.raw(`excluded.${products[c].name}`)]),
      ),
      setWhere: sql`(${products.removedAt} IS NULL AND excluded.platform_updated_at >= ${products.platformUpdatedAt})
        OR (${products.removedAt} IS NOT NULL AND excluded.platform_updated_at > ${products.removedAt})`,
    })
    .returning({ id: products.id })
    .prepare();
  const sqlite = db.$client;
  const deleteVariants = sqlite.query('DELETE FROM product_variants WHERE product_row_id = ?');
  // One statement for any number of ids (a JSON array): prepared once, where an IN list is prepared per length.
  const markListedStatement = sqlite.query('UPDATE products SET listed_at = ?1 WHERE store_id = ?2 AND product_id IN (SELECT value FROM json_each(?3))');
  const insertVariant = sqlite.query(
    `INSERT INTO product_variants (product_row_id, position, variant_id, title, sku, barcode, mpn, price, compare_at_price, availability, options, image, url)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const variantsOf = (rowIds: string[]): Map<string, ProductVariant[]> => {
    const byRow = new Map<string, ProductVariant[]>(rowIds.map((id) => [id, []]));
    if (rowIds.length === 0) return byRow;
    const rows = db.select().from(productVariants).where(inArray(productVariants.productRowId, rowIds)).orderBy(productVariants.productRowId, productVariants.position).all();
    for (const row of rows) byRow.get(row.productRowId)?.push(toVariant(row));
    return byRow;
  };

  // The product row and its variants change together or not at all (nested in the caller's transaction, if any).
  const applyUpsert = sqlite.transaction((storeId: string, currency: string | null, product: ProductData): UpsertOutcome => {
    const written = upsertStatement.get({
      id: newId(),
      storeId,
      productId: product.productId,
      handle: product.handle,
      title: product.title,
      descriptionHtml: product.descriptionHtml,
      descriptionText: product.descriptionHtml === null ? null : htmlToPlainText(product.descriptionHtml),
      price: product.price,
      currency,
      availability: product.availability,
      sku: product.sku,
      barcode: product.barcode,
      mpn: product.mpn,
      brand: product.brand,
      images: product.images,
      url: product.url,
      options: product.options,
      platformUpdatedAt: product.updatedAt,
      raw: product.raw,
      removedAt: null,
      syncedAt: clock.now(),
    });
    if (!written) return 'stale';
    deleteVariants.run(written.id);
    product.variants.forEach((v, position) =>
      insertVariant.run(written.id, position, v.variantId, v.title, v.sku, v.barcode, v.mpn, v.price, v.compareAtPrice, v.availability, JSON.stringify(v.options), v.image, v.url),
    );
    return 'applied';
  });

  return {
    /**
     * Insert or update catalogue data. A live row is updated by data at least as new as it (equal
     * times happen: platform A's `updated_at` has one-second precision); a removed row only by data
     * strictly newer than its removal.
     */
    upsert(storeId: string, currency: string | null, product: ProductData): UpsertOutcome {
      return applyUpsert(storeId, currency, product);
    },

    /** The variants of catalogue rows (by `products.id`), in the platform's order. */
    variantsOf,

    /**
     * Remove a product as of `at`. The row stays as a tombstone so an older create/update arriving
     * late cannot resurrect it; a product unknown so far gets a tombstone for the same reason.
     * `confirmed`: the platform itself says the product is gone now (a 404 from its API), which
     * outranks whatever we hold whatever the clocks say.
     */
    remove(storeId: string, productId: string, at: number, confirmed = false): RemoveOutcome {
      const now = clock.now();
      const written = db
        .insert(products)
        .values({ id: newId(), storeId, productId, images: [], platformUpdatedAt: at, removedAt: at, syncedAt: now, createdAt: now })
        .onConflictDoUpdate({
          target: [products.storeId, products.productId],
          set: { removedAt: sql`max(${at}, ${products.platformUpdatedAt})`, syncedAt: now },
          setWhere: confirmed
            ? sql`${products.removedAt} IS NULL`
            : sql`${products.removedAt} IS NULL AND ${products.platformUpdatedAt} <= ${at}`,
        })
        .returning({ id: products.id })
        .get();
      return written ? 'removed' : 'stale';
    },

    /** A catalogue sync pass started at `passStartedAt` listed these products on the platform. */
    markListed(storeId: string, productIds: string[], passStartedAt: number): void {
      if (productIds.length > 0) markListedStatement.run(passStartedAt, storeId, JSON.stringify(productIds));
    },

    /**
     * The sweep after a complete pass that started at `passStartedAt`, a step at a time: of the
     * store's next `limit` products after `after` (in id order, over the store's unique index), the
     * live ones the pass did not list and nothing wrote since it started (a product created by
     * webhook meanwhile is not among them).
     */
    unlistedAfter(storeId: string, passStartedAt: number, after: string, limit: number): UnlistedChunk {
      const rows = db
        .select({
          id: products.productId,
          unlisted: sql<number>`${products.removedAt} IS NULL AND (${products.listedAt} IS NULL OR ${products.listedAt} < ${passStartedAt}) AND ${products.syncedAt} < ${passStartedAt}`,
        })
        .from(products)
        .where(and(eq(products.storeId, storeId), gt(products.productId, after)))
        .orderBy(asc(products.productId))
        .limit(limit)
        .all();
      return unlistedChunk(rows, limit);
    },

    get(storeId: string, productId: string): ProductRow | null {
      return db.select().from(products).where(and(eq(products.storeId, storeId), eq(products.productId, productId), isNull(products.removedAt))).get() ?? null;
    },

    /**
     * The identifiers a live product goes by (platform id, then handle) when `ref` is either of
     * them; just `[ref]` otherwise. FAQs may be filed under either, and the widget detects either.
     */
    refsOf(storeId: string, ref: string): string[] {
      const row = db
        .select({ productId: products.productId, handle: products.handle })
        .from(products)
        .where(and(eq(products.storeId, storeId), isNull(products.removedAt), or(eq(products.productId, ref), eq(products.handle, ref))))
        .orderBy(sql`${products.productId} = ${ref} DESC`)
        .get();
      if (!row) return [ref];
      return row.handle !== null && row.handle !== row.productId ? [row.productId, row.handle] : [row.productId];
    },

    /** Keyset page over live products in sync order; `cursor` is the last row's internal id. */
    list(storeId: string, cursor: string | null, limit: number): { items: ProductRow[]; nextCursor: string | null } {
      const rows = db
        .select()
        .from(products)
        .where(and(eq(products.storeId, storeId), isNull(products.removedAt), cursor ? gt(products.id, cursor) : undefined))
        .orderBy(asc(products.id))
        .limit(limit + 1)
        .all();
      return keysetPage(rows, limit);
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
