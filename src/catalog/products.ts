import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/index.ts';
import { products, type ProductRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import type { ProductData } from '../platforms/types.ts';
import { htmlToText } from './text.ts';

export type UpsertOutcome = 'applied' | 'stale';
export type RemoveOutcome = 'removed' | 'stale';

/** A product as the admin API shows it; `productId` is always the platform's id. */
export interface ProductView {
  productId: string;
  handle: string | null;
  title: string;
  descriptionHtml: string | null;
  descriptionText: string | null;
  price: string | null;
  currency: string | null;
  availability: string | null;
  sku: string | null;
  gtin: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  updatedAt: string;
  syncedAt: string;
}

export function toProductView(row: ProductRow): ProductView {
  return {
    productId: row.productId,
    handle: row.handle,
    title: row.title,
    descriptionHtml: row.descriptionHtml,
    descriptionText: row.descriptionText,
    price: row.price,
    currency: row.currency,
    availability: row.availability,
    sku: row.sku,
    gtin: row.gtin,
    brand: row.brand,
    images: row.images,
    url: row.url,
    updatedAt: new Date(row.platformUpdatedAt).toISOString(),
    syncedAt: new Date(row.syncedAt).toISOString(),
  };
}

/**
 * The synced catalogue. Ordering rule for every write: the platform's own modification time wins,
 * so retries and reordered deliveries converge on the newest state whatever order they arrive in.
 */
export function createCatalog(db: Db, clock: Clock) {
  const dataColumns = ['handle', 'title', 'descriptionHtml', 'descriptionText', 'price', 'currency', 'availability', 'sku', 'gtin', 'brand', 'images', 'url', 'platformUpdatedAt', 'raw', 'removedAt', 'syncedAt'] as const;
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

  return {
    /**
     * Insert or update catalogue data. A live row is updated by data at least as new as it (equal
     * times happen: platform A's `updated_at` has one-second precision); a removed row only by data
     * strictly newer than its removal.
     */
    upsert(storeId: string, currency: string | null, product: ProductData): UpsertOutcome {
      const written = upsertStatement.get({
        id: newId(),
        storeId,
        productId: product.productId,
        handle: product.handle,
        title: product.title,
        descriptionHtml: product.descriptionHtml,
        descriptionText: product.descriptionHtml === null ? null : htmlToText(product.descriptionHtml),
        price: product.price,
        currency,
        availability: product.availability,
        sku: product.sku,
        gtin: product.gtin,
        brand: product.brand,
        images: product.images,
        url: product.url,
        platformUpdatedAt: product.updatedAt,
        raw: product.raw,
        removedAt: null,
        syncedAt: clock.now(),
      });
      return written ? 'applied' : 'stale';
    },

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
      const items = rows.slice(0, limit);
      return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
    },
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
