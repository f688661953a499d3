import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { SQLQueryBindings } from 'bun:sqlite';
import type { Db } from '../db/index.ts';
import { productVariants, products, type ProductRow, type ProductVariantRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { checkGtin, validGtin } from '../lib/gtin.ts';
import { htmlToPlainText } from '../lib/html.ts';
import { newId } from '../lib/ids.ts';
import { writeTransaction } from '../lib/write-transaction.ts';
import { keysetPage } from '../lib/query.ts';
import type { ProductData, ProductVariant } from './product-data.ts';
import { createDerivedTexts } from './derived-texts.ts';
import { unlistedChunk, type UnlistedChunk } from './sweep.ts';
import type { NamedRow } from './entries.ts';

/** Description texts kept in memory (catalog/derived-texts.ts): ~10,000 products, ~4 million characters. */
const DERIVED_TEXTS = { entries: 10_000, cost: 4_000_000 };

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
  const sqlite = db.$client;
  // Plain positional SQL, prepared once: the webhook hot path (drizzle's placeholder filling and JSON
  // column encoding cost more than the write itself). The ordering rule is the WHERE of the update.
  const upsertStatement = sqlite.query<{ id: string }, SQLQueryBindings[]>(
    `INSERT INTO products (id, store_id, product_id, handle, title, description_html, description_text, price, currency, availability, sku, barcode, mpn, brand, images, url, options, platform_updated_at, raw, removed_at, synced_at, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, CAST(?19 AS TEXT), NULL, ?20, ?20)
     ON CONFLICT (store_id, product_id) DO UPDATE SET
       handle = excluded.handle, title = excluded.title, description_html = excluded.description_html, description_text = excluded.description_text,
       price = excluded.price, currency = excluded.currency, availability = excluded.availability, sku = excluded.sku, barcode = excluded.barcode,
       mpn = excluded.mpn, brand = excluded.brand, images = excluded.images, url = excluded.url, options = excluded.options,
       platform_updated_at = excluded.platform_updated_at, raw = excluded.raw, removed_at = NULL,
       -- synced_at only moves forward, by at least 1 ms per applied write: it doubles as the row's
       -- version stamp (the signals capability keys its rendered output on it).
       synced_at = max(excluded.synced_at, products.synced_at + 1)
     WHERE (products.removed_at IS NULL AND excluded.platform_updated_at >= products.platform_updated_at)
        OR (products.removed_at IS NOT NULL AND excluded.platform_updated_at > products.removed_at)
     RETURNING id`,
  );
  const storedDescription = sqlite.query<{ html: string | null; text: string | null }, [string, string]>(
    'SELECT description_html AS html, description_text AS text FROM products WHERE store_id = ? AND product_id = ?',
  );
  const derivedTexts = createDerivedTexts(DERIVED_TEXTS);
  /**
   * The plain text of a product's description. Most updates change stock or prices, not the
   * description: text already derived from the same markup for this product is reused, not derived
   * again (from memory, else from the stored row: a query per delivery costs more than the memo).
   */
  const descriptionText = (storeId: string, product: ProductData): string | null => {
    const html = product.descriptionHtml;
    if (html === null) return null;
    const key = `${storeId}\n${product.productId}`;
    const remembered = derivedTexts.get(key, html);
    if (remembered !== undefined) return remembered;
    const stored = storedDescription.get(storeId, product.productId);
    const text = stored !== null && stored.text !== null && stored.html === html ? stored.text : htmlToPlainText(html);
    derivedTexts.remember(key, html, text);
    return text;
  };
  // Variants are written in place by position, and a row only when it differs (most updates change
  // the stock or price of one variant, if any): unchanged rows cost no page writes. Positions past
  // the new list are deleted, so the stored list always equals the product's.
  const VARIANT_COLUMNS = 'variant_id, title, sku, barcode, mpn, price, compare_at_price, availability, options, image, url';
  const writeVariant = sqlite.query(
    `INSERT INTO product_variants (product_row_id, position, ${VARIANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (product_row_id, position) DO UPDATE SET (${VARIANT_COLUMNS}) = (${VARIANT_COLUMNS.replace(/\w+/g, 'excluded.$&')})
     WHERE (${VARIANT_COLUMNS.replace(/\w+/g, 'product_variants.$&')}) IS NOT (${VARIANT_COLUMNS.replace(/\w+/g, 'excluded.$&')})`,
  );
  const deleteVariantsFrom = sqlite.query('DELETE FROM product_variants WHERE product_row_id = ? AND position >= ?');
  // One statement for any number of ids (a JSON array): prepared once, where an IN list is prepared per length.
  const markListedStatement = sqlite.query('UPDATE products SET listed_at = ?1 WHERE store_id = ?2 AND product_id IN (SELECT value FROM json_each(?3))');
  const variantsOf = (rowIds: string[]): Map<string, ProductVariant[]> => {
    const byRow = new Map<string, ProductVariant[]>(rowIds.map((id) => [id, []]));
    if (rowIds.length === 0) return byRow;
    const rows = db.select().from(productVariants).where(inArray(productVariants.productRowId, rowIds)).orderBy(productVariants.productRowId, productVariants.position).all();
    for (const row of rows) byRow.get(row.productRowId)?.push(toVariant(row));
    return byRow;
  };

  // The product row and its variants change together or not at all (nested in the caller's transaction, if any).
  const applyUpsert = writeTransaction(sqlite, (storeId: string, currency: string | null, product: ProductData): UpsertOutcome => {
    const written = upsertStatement.get(
      newId(),
      storeId,
      product.productId,
      product.handle,
      product.title,
      product.descriptionHtml,
      descriptionText(storeId, product),
      product.price,
      currency,
      product.availability,
      product.sku,
      product.barcode,
      product.mpn,
      product.brand,
      JSON.stringify(product.images),
      product.url,
      JSON.stringify(product.options),
      product.updatedAt,
      product.rawJson ?? (product.raw == null ? null : JSON.stringify(product.raw)),
      clock.now(),
    );
    if (!written) return 'stale';
    product.variants.forEach((v, position) =>
      writeVariant.run(written.id, position, v.variantId, v.title, v.sku, v.barcode, v.mpn, v.price, v.compareAtPrice, v.availability, JSON.stringify(v.options), v.image, v.url),
    );
    deleteVariantsFrom.run(written.id, product.variants.length);
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

    /** The live products any of `refs` names (by platform id or handle), for naming them: id, handle, title, storefront URL. */
    namedBy(storeId: string, refs: string[]): NamedRow[] {
      return db
        .select({ id: products.productId, handle: products.handle, title: products.title, url: products.url })
        .from(products)
        .where(and(eq(products.storeId, storeId), isNull(products.removedAt), or(inArray(products.productId, refs), inArray(products.handle, refs))))
        .all();
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
