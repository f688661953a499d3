import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import { catalogEntries, productVariants, products } from './db/schema/index.ts';
import { refsOfFound } from '../../catalog/entries.ts';
import type { CatalogEntryType } from '../../catalog/entry-data.ts';
import type { ProductData, ProductVariant } from '../../catalog/product-data.ts';
import { toVariant } from '../../catalog/products.ts';
import { unlistedChunk } from '../../catalog/sweep.ts';
import { newId } from '../../lib/ids.ts';
import { keysetPage } from '../../lib/query.ts';
import type { CatalogEntryRecords, ProductRecords } from '../content.ts';
import { clientOf, type PostgresClient, type PostgresQueries } from './client.ts';
import { jsonRows } from './json-rows.ts';

/** The value an upsert proposes for a column (`excluded.<column>`). */
const proposed = (column: string) => sql.raw(`excluded.${column}`);

/** An upsert's `set` that takes the proposed value of each of these columns. */
function takeProposed<Table extends Record<Key, { name: string }>, Key extends string>(table: Table, keys: readonly Key[]): Record<Key, ReturnType<typeof proposed>> {
  return Object.fromEntries(keys.map((key) => [key, proposed(table[key].name)])) as Record<Key, ReturnType<typeof proposed>>;
}

// The webhook hot path in plain SQL (as on SQLite): drizzle's building of these statements cost the
// request thread several times what the statements cost the server.
const STORED_DESCRIPTION = 'SELECT description_html AS html, description_text AS text FROM products WHERE store_id = $1 AND product_id = $2';
/** What an applied product write replaces: its platform data (the row's id, store and creation stay). */
const PRODUCT_DATA = 'handle, title, description_html, description_text, price, currency, availability, sku, barcode, mpn, brand, images, url, options, platform_updated_at, raw';
const excludedOf = (columns: string) => columns.replace(/\w+/g, 'excluded.$&');
const VARIANT_DATA = 'variant_id, title, sku, barcode, mpn, price, compare_at_price, availability, options, image, url';
/**
 * A product and its variants in one statement (one round trip: a delivery group writes its products
 * one after another). The product: the ordering rule is the WHERE of the update; synced_at only
 * moves forward, by at least 1 ms per applied write (the row's version stamp); no row when stale.
 * Its variants, only when it was written: in place by position, and a row only when it differs
 * (they come as one JSON parameter, json-rows.ts); positions past the new list are deleted.
 */
const UPSERT_PRODUCT = `WITH written AS (
    INSERT INTO products (id, store_id, product_id, ${PRODUCT_DATA}, removed_at, synced_at, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::bigint, $19, NULL, $20::bigint, $20::bigint)
    ON CONFLICT (store_id, product_id) DO UPDATE SET (${PRODUCT_DATA}) = (${excludedOf(PRODUCT_DATA)}), removed_at = NULL,
      synced_at = greatest(excluded.synced_at, products.synced_at + 1)
    WHERE (products.removed_at IS NULL AND excluded.platform_updated_at >= products.platform_updated_at)
       OR (products.removed_at IS NOT NULL AND excluded.platform_updated_at > products.removed_at)
    RETURNING id
  ), variants AS (
    INSERT INTO product_variants (product_row_id, position, ${VARIANT_DATA})
    SELECT written.id, v.position, ${VARIANT_DATA.replace(/\w+/g, 'v.$&')} FROM written, json_populate_recordset(NULL::product_variants, $21::text::json) AS v
    ON CONFLICT (product_row_id, position) DO UPDATE SET (${VARIANT_DATA}) = (${excludedOf(VARIANT_DATA)})
    WHERE (${VARIANT_DATA.replace(/\w+/g, 'product_variants.$&')}) IS DISTINCT FROM (${excludedOf(VARIANT_DATA)})
  ), dropped AS (
    DELETE FROM product_variants USING written WHERE product_row_id = written.id AND position >= $22::int
  )
  SELECT id FROM written`;

/** A variant as a row of UPSERT_PRODUCT's JSON. */
const variantRow = (v: ProductVariant, position: number) => ({
  position, variant_id: v.variantId, title: v.title, sku: v.sku, barcode: v.barcode, mpn: v.mpn, price: v.price,
  compare_at_price: v.compareAtPrice, availability: v.availability, options: v.options, image: v.image, url: v.url,
});

/** The product's platform payload as stored: the JSON it arrived in when the caller holds it, else serialised. */
function rawJsonOf(product: ProductData): string | null {
  if (product.rawJson !== undefined) return typeof product.rawJson === 'string' ? product.rawJson : new TextDecoder().decode(product.rawJson);
  return product.raw == null ? null : JSON.stringify(product.raw);
}

/**
 * The product writes on `db`: the pool, or an open transaction they are part of (a webhook
 * delivery group, a catalogue sync batch). `upsert` must run inside a transaction. With
 * `lockUnlisted`, `unlistedAfter` locks the rows it reads to the end of that transaction (and reads
 * them as any write that held them left them), so what it finds unlisted stays so until the
 * transaction removes it.
 */
export function productWrites(db: PostgresQueries, { lockUnlisted = false } = {}): Pick<ProductRecords, 'upsert' | 'remove' | 'markListed' | 'unlistedAfter'> {
  return {
    // The product row and its variants change together or not at all. Concurrent writes of one
    // product queue on its row's lock (the upsert's), so each sees the other's committed row.
    async upsert(storeId, currency, product, description, at) {
      const client = clientOf(db);
      let descriptionText: string | null;
      if ('known' in description) descriptionText = description.known;
      else {
        const [stored] = await client.unsafe(STORED_DESCRIPTION, [storeId, product.productId]);
        descriptionText = description.derive(stored ?? null);
      }
      const [written] = await client.unsafe(UPSERT_PRODUCT, [
        newId(), storeId, product.productId, product.handle, product.title, product.descriptionHtml, descriptionText, product.price, currency,
        product.availability, product.sku, product.barcode, product.mpn, product.brand, JSON.stringify(product.images), product.url,
        JSON.stringify(product.options), product.updatedAt, rawJsonOf(product), at, jsonRows(product.variants.map(variantRow)), product.variants.length,
      ]);
      return written ? 'applied' : 'stale';
    },

    async remove(storeId, productId, removedAt, confirmed, at) {
      const [written] = await db
        .insert(products)
        .values({ id: newId(), storeId, productId, images: [], platformUpdatedAt: removedAt, removedAt, syncedAt: at, createdAt: at })
        .onConflictDoUpdate({
          target: [products.storeId, products.productId],
          set: { removedAt: sql`greatest(excluded.removed_at, ${products.platformUpdatedAt})`, syncedAt: at },
          setWhere: confirmed ? sql`${products.removedAt} IS NULL` : sql`${products.removedAt} IS NULL AND ${products.platformUpdatedAt} <= excluded.removed_at`,
        })
        .returning({ id: products.id });
      return written ? 'removed' : 'stale';
    },

    async markListed(storeId, productIds, passStartedAt) {
      if (productIds.length > 0) await db.update(products).set({ listedAt: passStartedAt }).where(and(eq(products.storeId, storeId), inArray(products.productId, productIds)));
    },

    async unlistedAfter(storeId, passStartedAt, after, limit) {
      const query = db
        .select({
          id: products.productId,
          unlisted: sql<boolean>`${products.removedAt} IS NULL AND (${products.listedAt} IS NULL OR ${products.listedAt} < ${passStartedAt}) AND ${products.syncedAt} < ${passStartedAt}`,
        })
        .from(products)
        .where(and(eq(products.storeId, storeId), gt(products.productId, after)))
        .orderBy(asc(products.productId))
        .limit(limit);
      return unlistedChunk(lockUnlisted ? await query.for('update') : await query, limit);
    },
  };
}

/** Products on PostgreSQL (the same contract as src/storage/sqlite/catalog.ts). */
export function postgresProductRecords({ db }: Pick<PostgresClient, 'db'>): ProductRecords {
  const live = (storeId: string) => and(eq(products.storeId, storeId), isNull(products.removedAt));
  const writes = productWrites(db);
  return {
    ...writes,
    upsert: (...args) => db.transaction((tx) => productWrites(tx).upsert(...args)),

    async get(storeId, productId) {
      const [product] = await db.select().from(products).where(and(live(storeId), eq(products.productId, productId))).limit(1);
      return product ?? null;
    },

    async refsOf(storeId, ref) {
      const [found] = await db
        .select({ id: products.productId, handle: products.handle })
        .from(products)
        .where(and(live(storeId), or(eq(products.productId, ref), eq(products.handle, ref))))
        .orderBy(sql`${products.productId} = ${ref} DESC`)
        .limit(1);
      return refsOfFound(found ?? null, ref);
    },

    namedBy: async (storeId, refs) =>
      db
        .select({ id: products.productId, handle: products.handle, title: products.title, url: products.url })
        .from(products)
        .where(and(live(storeId), or(inArray(products.productId, refs), inArray(products.handle, refs)))),

    async list(storeId, cursor, limit) {
      const rows = await db
        .select()
        .from(products)
        .where(and(live(storeId), cursor ? gt(products.id, cursor) : undefined))
        .orderBy(asc(products.id))
        .limit(limit + 1);
      return keysetPage(rows, limit);
    },

    async variantsOf(productRowIds) {
      const byRow = new Map<string, ProductVariant[]>(productRowIds.map((id) => [id, []]));
      if (productRowIds.length === 0) return byRow;
      const rows = await db.select().from(productVariants).where(inArray(productVariants.productRowId, productRowIds)).orderBy(productVariants.productRowId, productVariants.position);
      for (const row of rows) byRow.get(row.productRowId)?.push(toVariant(row));
      return byRow;
    },
  };
}

/** Category and page writes on `db`: the pool, or an open transaction they are part of (a catalogue sync batch). */
export function entryWrites(db: PostgresQueries): Pick<CatalogEntryRecords, 'upsert' | 'remove' | 'unlistedAfter'> {
  return {
    async upsert(entries) {
      if (entries.length === 0) return;
      await db
        .insert(catalogEntries)
        .values(entries)
        .onConflictDoUpdate({
          target: [catalogEntries.storeId, catalogEntries.type, catalogEntries.entryId],
          set: takeProposed(catalogEntries, ['handle', 'title', 'url', 'platformUpdatedAt', 'listedAt', 'syncedAt']),
        });
    },

    async unlistedAfter(storeId, type, passStartedAt, after, limit) {
      const rows = await db
        .select({ id: catalogEntries.entryId, unlisted: sql<boolean>`${catalogEntries.listedAt} < ${passStartedAt}` })
        .from(catalogEntries)
        .where(and(ofType(storeId, type), gt(catalogEntries.entryId, after)))
        .orderBy(asc(catalogEntries.entryId))
        .limit(limit);
      return unlistedChunk(rows, limit);
    },

    async remove(storeId, type, entryIds) {
      if (entryIds.length === 0) return 0;
      const removed = await db.delete(catalogEntries).where(and(ofType(storeId, type), inArray(catalogEntries.entryId, entryIds))).returning({ id: catalogEntries.id });
      return removed.length;
    },
  };
}

const ofType = (storeId: string, type: CatalogEntryType) => and(eq(catalogEntries.storeId, storeId), eq(catalogEntries.type, type));

/** Categories and content pages on PostgreSQL (the same contract as src/storage/sqlite/catalog.ts). */
export function postgresCatalogEntryRecords({ db }: Pick<PostgresClient, 'db'>): CatalogEntryRecords {
  return {
    ...entryWrites(db),

    async refsOf(storeId, type, ref) {
      const [found] = await db
        .select({ id: catalogEntries.entryId, handle: catalogEntries.handle })
        .from(catalogEntries)
        .where(and(ofType(storeId, type), or(eq(catalogEntries.entryId, ref), eq(catalogEntries.handle, ref))))
        .orderBy(sql`${catalogEntries.entryId} = ${ref} DESC`)
        .limit(1);
      return refsOfFound(found ?? null, ref);
    },

    namedBy: async (storeId, type, refs) =>
      db
        .select({ id: catalogEntries.entryId, handle: catalogEntries.handle, title: catalogEntries.title, url: catalogEntries.url })
        .from(catalogEntries)
        .where(and(ofType(storeId, type), or(inArray(catalogEntries.entryId, refs), inArray(catalogEntries.handle, refs)))),

    async list(storeId, type, cursor, limit) {
      const rows = await db
        .select()
        .from(catalogEntries)
        .where(and(ofType(storeId, type), cursor ? gt(catalogEntries.id, cursor) : undefined))
        .orderBy(asc(catalogEntries.id))
        .limit(limit + 1);
      return keysetPage(rows, limit);
    },
  };
}
