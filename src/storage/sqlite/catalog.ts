import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { SQLQueryBindings } from 'bun:sqlite';
import type { AppDatabase } from './db/index.ts';
import { catalogEntries, productVariants, products } from './db/schema/index.ts';
import { refsOfFound } from '../../catalog/entries.ts';
import type { CatalogEntryType } from '../../catalog/entry-data.ts';
import type { ProductVariant } from '../../catalog/product-data.ts';
import { toVariant, type StoredDescription } from '../../catalog/products.ts';
import { unlistedChunk } from '../../catalog/sweep.ts';
import { newId } from '../../lib/ids.ts';
import { keysetPage } from '../../lib/query.ts';
import { writeTransaction } from './write-transaction.ts';
import type { CatalogEntryRecords, ProductRecords } from '../content.ts';
import type { Synchronous } from '../synchronous.ts';
import { promised } from './promised.ts';

/**
 * Products on SQLite, answered synchronously: the webhook group commit and the catalogue sync write
 * them inside their own transactions, and the signals and the public FAQ read them without a promise.
 */
export function sqliteProductRecordsSync({ db, sqlite }: Pick<AppDatabase, 'db' | 'sqlite'>): Synchronous<ProductRecords> {
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
  const storedDescription = sqlite.query<StoredDescription, [string, string]>('SELECT description_html AS html, description_text AS text FROM products WHERE store_id = ? AND product_id = ?');
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
  const live = (storeId: string) => and(eq(products.storeId, storeId), isNull(products.removedAt));

  return {
    // The product row and its variants change together or not at all (nested in the caller's transaction, if any).
    upsert: writeTransaction(sqlite, (storeId, currency, product, description, at) => {
      const written = upsertStatement.get(
        newId(),
        storeId,
        product.productId,
        product.handle,
        product.title,
        product.descriptionHtml,
        'known' in description ? description.known : description.derive(storedDescription.get(storeId, product.productId)),
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
        at,
      );
      if (!written) return 'stale';
      product.variants.forEach((v, position) =>
        writeVariant.run(written.id, position, v.variantId, v.title, v.sku, v.barcode, v.mpn, v.price, v.compareAtPrice, v.availability, JSON.stringify(v.options), v.image, v.url),
      );
      deleteVariantsFrom.run(written.id, product.variants.length);
      return 'applied';
    }),

    remove(storeId, productId, removedAt, confirmed, at) {
      const written = db
        .insert(products)
        .values({ id: newId(), storeId, productId, images: [], platformUpdatedAt: removedAt, removedAt, syncedAt: at, createdAt: at })
        .onConflictDoUpdate({
          target: [products.storeId, products.productId],
          set: { removedAt: sql`max(${removedAt}, ${products.platformUpdatedAt})`, syncedAt: at },
          setWhere: confirmed
            ? sql`${products.removedAt} IS NULL`
            : sql`${products.removedAt} IS NULL AND ${products.platformUpdatedAt} <= ${removedAt}`,
        })
        .returning({ id: products.id })
        .get();
      return written ? 'removed' : 'stale';
    },

    markListed(storeId, productIds, passStartedAt) {
      if (productIds.length > 0) markListedStatement.run(passStartedAt, storeId, JSON.stringify(productIds));
    },

    unlistedAfter(storeId, passStartedAt, after, limit) {
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

    get: (storeId, productId) => db.select().from(products).where(and(live(storeId), eq(products.productId, productId))).get() ?? null,

    refsOf(storeId, ref) {
      const found = db
        .select({ id: products.productId, handle: products.handle })
        .from(products)
        .where(and(live(storeId), or(eq(products.productId, ref), eq(products.handle, ref))))
        .orderBy(sql`${products.productId} = ${ref} DESC`)
        .get();
      return refsOfFound(found ?? null, ref);
    },

    namedBy: (storeId, refs) =>
      db
        .select({ id: products.productId, handle: products.handle, title: products.title, url: products.url })
        .from(products)
        .where(and(eq(products.storeId, storeId), isNull(products.removedAt), or(inArray(products.productId, refs), inArray(products.handle, refs))))
        .all(),

    list(storeId, cursor, limit) {
      const rows = db
        .select()
        .from(products)
        .where(and(live(storeId), cursor ? gt(products.id, cursor) : undefined))
        .orderBy(asc(products.id))
        .limit(limit + 1)
        .all();
      return keysetPage(rows, limit);
    },

    variantsOf(productRowIds) {
      const byRow = new Map<string, ProductVariant[]>(productRowIds.map((id) => [id, []]));
      if (productRowIds.length === 0) return byRow;
      const rows = db.select().from(productVariants).where(inArray(productVariants.productRowId, productRowIds)).orderBy(productVariants.productRowId, productVariants.position).all();
      for (const row of rows) byRow.get(row.productRowId)?.push(toVariant(row));
      return byRow;
    },
  };
}

export const sqliteProductRecords = (database: Pick<AppDatabase, 'db' | 'sqlite'>): ProductRecords => promised<ProductRecords>(sqliteProductRecordsSync(database));

/** Categories and content pages on SQLite, answered synchronously: the catalogue sync writes them inside its own transactions. */
export function sqliteCatalogEntryRecordsSync({ db }: Pick<AppDatabase, 'db'>): Synchronous<CatalogEntryRecords> {
  const ofType = (storeId: string, type: CatalogEntryType) => and(eq(catalogEntries.storeId, storeId), eq(catalogEntries.type, type));
  return {
    upsert(entries) {
      if (entries.length === 0) return;
      db.insert(catalogEntries)
        .values(entries)
        .onConflictDoUpdate({
          target: [catalogEntries.storeId, catalogEntries.type, catalogEntries.entryId],
          set: {
            handle: sql.raw('excluded.handle'),
            title: sql.raw('excluded.title'),
            url: sql.raw('excluded.url'),
            platformUpdatedAt: sql.raw('excluded.platform_updated_at'),
            listedAt: sql.raw('excluded.listed_at'),
            syncedAt: sql.raw('excluded.synced_at'),
          },
        })
        .run();
    },

    unlistedAfter(storeId, type, passStartedAt, after, limit) {
      const rows = db
        .select({ id: catalogEntries.entryId, unlisted: sql<number>`${catalogEntries.listedAt} < ${passStartedAt}` })
        .from(catalogEntries)
        .where(and(ofType(storeId, type), gt(catalogEntries.entryId, after)))
        .orderBy(asc(catalogEntries.entryId))
        .limit(limit)
        .all();
      return unlistedChunk(rows, limit);
    },

    remove(storeId, type, entryIds) {
      if (entryIds.length === 0) return 0;
      return db.delete(catalogEntries).where(and(ofType(storeId, type), inArray(catalogEntries.entryId, entryIds))).returning({ id: catalogEntries.id }).all().length;
    },

    refsOf(storeId, type, ref) {
      const found = db
        .select({ id: catalogEntries.entryId, handle: catalogEntries.handle })
        .from(catalogEntries)
        .where(and(ofType(storeId, type), or(eq(catalogEntries.entryId, ref), eq(catalogEntries.handle, ref))))
        .orderBy(sql`${catalogEntries.entryId} = ${ref} DESC`)
        .get();
      return refsOfFound(found ?? null, ref);
    },

    namedBy: (storeId, type, refs) =>
      db
        .select({ id: catalogEntries.entryId, handle: catalogEntries.handle, title: catalogEntries.title, url: catalogEntries.url })
        .from(catalogEntries)
        .where(and(ofType(storeId, type), or(inArray(catalogEntries.entryId, refs), inArray(catalogEntries.handle, refs))))
        .all(),

    list(storeId, type, cursor, limit) {
      const rows = db
        .select()
        .from(catalogEntries)
        .where(and(ofType(storeId, type), cursor ? gt(catalogEntries.id, cursor) : undefined))
        .orderBy(asc(catalogEntries.id))
        .limit(limit + 1)
        .all();
      return keysetPage(rows, limit);
    },
  };
}

export const sqliteCatalogEntryRecords = (database: Pick<AppDatabase, 'db'>): CatalogEntryRecords => promised<CatalogEntryRecords>(sqliteCatalogEntryRecordsSync(database));
