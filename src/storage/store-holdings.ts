// What a store's removal reads and deletes, as plain SQL both engines answer alike (one parameter,
// the store's id, as `$1`): src/storage/sqlite/stores.ts and src/storage/postgres/stores.ts run it.

/** What svc holds for a store (StoreHoldings, src/stores/removal.ts), one count per kind. */
export const HOLDINGS_SQL = `SELECT
  (SELECT count(*) FROM products WHERE store_id = $1 AND removed_at IS NULL) AS "products",
  (SELECT count(*) FROM product_enrichments WHERE store_id = $1) AS "enrichments",
  (SELECT count(*) FROM faq_entries WHERE store_id = $1) AS "faqs",
  (SELECT count(*) FROM catalog_entries WHERE store_id = $1 AND type = 'category') AS "categories",
  (SELECT count(*) FROM catalog_entries WHERE store_id = $1 AND type = 'page') AS "pages",
  (SELECT count(*) FROM webhook_deliveries WHERE store_id = $1) AS "deliveries",
  (SELECT count(*) FROM order_signals WHERE store_id = $1) AS "orderSignals",
  (SELECT count(*) FROM store_events WHERE store_id = $1) AS "storeEvents",
  (SELECT count(*) FROM api_keys WHERE store_id = $1) AS "keys"`;

/**
 * Every row that names the store, rows that reference others first (foreign keys are enforced):
 * the catalogue and what hangs off it, FAQs, sync state, the delivery log, order signals, store
 * events, jobs of any state, the keys bound to it (their console sessions go with them), its
 * creation-ping window, then the store. The delivery log, order signals and jobs have no index by
 * store (each would cost every delivery a write): those three are read through once.
 */
export const STORE_DELETES = [
  'DELETE FROM product_variants WHERE product_row_id IN (SELECT id FROM products WHERE store_id = $1)',
  'DELETE FROM product_enrichments WHERE store_id = $1',
  'DELETE FROM products WHERE store_id = $1',
  'DELETE FROM catalog_entries WHERE store_id = $1',
  'DELETE FROM faq_entries WHERE store_id = $1',
  'DELETE FROM faq_entity_changes WHERE store_id = $1',
  'DELETE FROM catalog_syncs WHERE store_id = $1',
  'DELETE FROM webhook_deliveries WHERE store_id = $1',
  'DELETE FROM order_signals WHERE store_id = $1',
  'DELETE FROM store_events WHERE store_id = $1',
  'DELETE FROM jobs WHERE store_id = $1',
  'DELETE FROM api_keys WHERE store_id = $1',
  'DELETE FROM hook_ping_windows WHERE store_id = $1',
  'DELETE FROM stores WHERE id = $1',
];
