// The signals' reads as plain SQL both engines answer alike (parameters `$1`, `$2`, ... numbered in
// the order they first appear, as SQLite binds them), with the rows they answer read into the
// signals' own values: src/storage/sqlite/signals.ts and src/storage/postgres/signals.ts run them.
// An engine may answer a count, sum or bigint as text (PostgreSQL does): every number is read with Number().
import type { Availability } from '../catalog/product-data.ts';
import type { DiscoveryStore, ListedProduct } from '../signals/discovery.ts';
import type { SignalCandidate } from '../signals/service.ts';
import type { StoreSettings } from '../stores/settings.ts';

/**
 * The signals' statements. `binary` follows the platform-id columns the listings are ordered by:
 * PostgreSQL's text order follows the database's collation, SQLite's is by bytes (`COLLATE "C"`
 * makes PostgreSQL's the same).
 */
export function signalQueries(binary: string) {
  // A product's FAQs are filed under its platform id or its handle. The sum of the change times is a
  // version (any of them moving moves it); the max is the Last-Modified contribution.
  const faqChanges = `FROM faq_entity_changes c WHERE c.store_id = p.store_id AND c.entity_type = 'product' AND c.entity_ref IN (p.product_id, p.handle)`;
  return {
    /** $1 product id, $2 platform, $3 store id or null. */
    candidates: `
SELECT p.id AS "rowId", p.store_id AS "storeId", p.product_id AS "productId", p.handle, p.title, p.description_html AS "descriptionHtml",
  p.price, p.currency AS "productCurrency", p.availability, p.sku, p.barcode, p.mpn, p.brand, p.images, p.url, p.options, p.synced_at AS "syncedAt",
  s.status AS "storeStatus", s.signals_withdrawn_at AS "withdrawnAt", s.currency AS "storeCurrency", s.domain AS "storeDomain", s.settings AS "storeSettings",
  s.updated_at AS "storeUpdatedAt",
  e.summary, e.highlights, e.attributes, e.updated_at AS "enrichedAt",
  (SELECT max(c.changed_at) ${faqChanges}) AS "faqChangedAt",
  (SELECT coalesce(sum(c.changed_at), 0) ${faqChanges}) AS "faqStamp"
FROM stores s
JOIN products p ON p.store_id = s.id AND p.product_id = $1 AND p.removed_at IS NULL
JOIN product_enrichments e ON e.product_row_id = p.id
WHERE s.platform = $2 AND (CAST($3 AS TEXT) IS NULL OR s.id = CAST($3 AS TEXT))`,
    /** $1 store id. */
    store: 'SELECT id, platform, domain, status, signals_withdrawn_at AS "withdrawnAt" FROM stores WHERE id = $1',
    /**
     * $1 store id. Every write that can change what is listed or its lastmod moves one of these sums:
     * product syncs and removals move synced_at, enrichment writes updated_at, FAQ writes changed_at
     * (each by at least 1 ms), store writes its updated_at.
     */
    storeStamp: `SELECT
  (SELECT count(*) || ':' || coalesce(sum(synced_at), 0) FROM products WHERE store_id = $1) || '|' ||
  (SELECT count(*) || ':' || coalesce(sum(updated_at), 0) FROM product_enrichments WHERE store_id = $1) || '|' ||
  (SELECT count(*) || ':' || coalesce(sum(changed_at), 0) FROM faq_entity_changes WHERE store_id = $1 AND entity_type = 'product') || '|' ||
  coalesce((SELECT updated_at FROM stores WHERE id = $1) || '', 'none') AS stamp`,
    /** $1 store id. */
    listed: `
SELECT p.product_id AS "productId", p.title, e.summary, p.synced_at AS "syncedAt", e.updated_at AS "enrichedAt",
  (SELECT max(c.changed_at) ${faqChanges}) AS "faqChangedAt"
FROM products p JOIN product_enrichments e ON e.product_row_id = p.id
WHERE p.store_id = $1 AND p.removed_at IS NULL
ORDER BY p.product_id${binary}`,
    servedStores: `SELECT id, platform FROM stores WHERE status = 'active' AND signals_withdrawn_at IS NULL ORDER BY created_at, id${binary}`,
  };
}

type Row = Record<string, unknown>;
const text = (value: unknown) => (value === null ? null : String(value));
const number = (value: unknown) => Number(value);
const maybeNumber = (value: unknown) => (value === null ? null : Number(value));
/** A JSON column: text as stored (a driver that parses it already answers the value). */
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

export function candidateOf(row: Row): SignalCandidate {
  return {
    rowId: String(row.rowId),
    storeId: String(row.storeId),
    productId: String(row.productId),
    handle: text(row.handle),
    title: String(row.title),
    descriptionHtml: text(row.descriptionHtml),
    price: text(row.price),
    productCurrency: text(row.productCurrency),
    availability: text(row.availability) as Availability | null,
    sku: text(row.sku),
    barcode: text(row.barcode),
    mpn: text(row.mpn),
    brand: text(row.brand),
    images: json<string[]>(row.images),
    url: text(row.url),
    options: json<string[]>(row.options),
    syncedAt: number(row.syncedAt),
    storeStatus: row.storeStatus as SignalCandidate['storeStatus'],
    withdrawnAt: maybeNumber(row.withdrawnAt),
    storeCurrency: text(row.storeCurrency),
    storeDomain: String(row.storeDomain),
    storeSettings: json<StoreSettings>(row.storeSettings),
    storeUpdatedAt: number(row.storeUpdatedAt),
    summary: String(row.summary),
    highlights: json<string[]>(row.highlights),
    attributes: json<Record<string, string>>(row.attributes),
    enrichedAt: number(row.enrichedAt),
    faqChangedAt: maybeNumber(row.faqChangedAt),
    faqStamp: number(row.faqStamp),
  };
}

export const discoveryStoreOf = (row: Row): DiscoveryStore => ({
  id: String(row.id),
  platform: row.platform as DiscoveryStore['platform'],
  domain: String(row.domain),
  status: row.status as DiscoveryStore['status'],
  withdrawnAt: maybeNumber(row.withdrawnAt),
});

export const servedStoreOf = (row: Row): Pick<DiscoveryStore, 'id' | 'platform'> => ({ id: String(row.id), platform: row.platform as DiscoveryStore['platform'] });

export const listedProductOf = (row: Row): ListedProduct => ({
  productId: String(row.productId),
  title: String(row.title),
  summary: String(row.summary),
  syncedAt: number(row.syncedAt),
  enrichedAt: number(row.enrichedAt),
  faqChangedAt: maybeNumber(row.faqChangedAt),
});
