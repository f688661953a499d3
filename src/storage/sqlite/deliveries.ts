import type { AppDatabase } from './db/index.ts';
import { applyEach } from '../../lib/group-commit.ts';
import { newId } from '../../lib/ids.ts';
import { writeTransaction } from './write-transaction.ts';
import type { RefusalReason } from '../../platforms/types.ts';
import { asApplied, removalKey, type DeliveryEffect, type DeliveryToCommit, type Outcome, type Settled } from '../../webhooks/deliveries.ts';
import { queuedJob } from '../../webhooks/queue.ts';
import type { DeliveryRecords } from '../stores.ts';
import { sqliteProductRecordsSync } from './catalog.ts';
import { sqliteJobRecordsSync } from './jobs.ts';
import { promised } from './promised.ts';
import { sqliteStoreRecordsSync, storeEventWriter } from './stores.ts';

/** What applying a delivery's effect came to, before it is logged. */
interface Applied {
  outcome: Outcome;
  productId: string | null;
  reason?: RefusalReason;
}

const HELD_ELSEWHERE = { outcome: 'refused', reason: 'held_by_other_store' } as const;

/** Webhook deliveries on SQLite: each group in one transaction, with plain positional statements prepared once (the delivery path). */
export function sqliteDeliveryRecords(database: Pick<AppDatabase, 'db' | 'sqlite'>): DeliveryRecords {
  const { sqlite } = database;
  const products = sqliteProductRecordsSync(database);
  const jobs = sqliteJobRecordsSync(database);
  const stores = sqliteStoreRecordsSync(database);
  const recordEvents = storeEventWriter(database.db);
  const insertOrderSignal = sqlite.query<never, [string, string, string, string, string | null, number]>('INSERT INTO order_signals (id, store_id, topic, order_id, status, received_at) VALUES (?, ?, ?, ?, ?, ?)');

  /**
   * Stores of svc's platform-A app share one secret, and a product or order body names no shop: one
   * signed for one such store and sent with another's shop header would verify. A product (live or
   * removed) or an order another of these stores holds is not taken for this one.
   */
  const APP_STORES = "SELECT id FROM stores WHERE platform = 'platform-a' AND credential_kind = 'via-app' AND id <> ?2";
  const productOfAppStore = sqlite.query<{ found: 1 }, [string, string]>(`SELECT 1 AS found FROM products WHERE product_id = ?1 AND store_id IN (${APP_STORES}) LIMIT 1`);
  const orderOfAppStore = sqlite.query<{ found: 1 }, [string, string]>(`SELECT 1 AS found FROM order_signals WHERE order_id = ?1 AND store_id IN (${APP_STORES}) LIMIT 1`);
  const heldElsewhere = (delivery: DeliveryToCommit, held: typeof productOfAppStore, id: string) => delivery.sharesAppSecret && held.get(id, delivery.storeId) !== null;

  function apply(delivery: DeliveryToCommit, effect: DeliveryEffect): Applied {
    const { storeId, at } = delivery;
    switch (effect.kind) {
      case 'upsert': {
        const { productId } = effect.product;
        if (heldElsewhere(delivery, productOfAppStore, productId)) return { ...HELD_ELSEWHERE, productId };
        return { outcome: products.upsert(storeId, effect.currency, effect.product, effect.description, at), productId };
      }
      case 'remove':
        if (heldElsewhere(delivery, productOfAppStore, effect.productId)) return { ...HELD_ELSEWHERE, productId: effect.productId };
        return { outcome: products.remove(storeId, effect.productId, effect.removedAt, false, at), productId: effect.productId };
      case 'enqueue':
        jobs.enqueue(queuedJob(effect.job, storeId, effect.payload, at));
        return { outcome: 'queued', productId: effect.productId };
      case 'deactivate':
        stores.deactivate(storeId, at);
        return { outcome: 'deactivated', productId: null };
      case 'privacy':
        recordEvents(storeId, [delivery.topic], at);
        return { outcome: 'acknowledged', productId: null };
      case 'order':
        if (heldElsewhere(delivery, orderOfAppStore, effect.orderId)) return { ...HELD_ELSEWHERE, productId: null };
        insertOrderSignal.run(newId(), storeId, delivery.topic, effect.orderId, effect.status, at);
        return { outcome: 'recorded', productId: null };
      case 'ignore':
        return { outcome: effect.outcome, productId: null };
      case 'refuse':
        return { outcome: 'refused', productId: null, reason: effect.reason };
    }
  }

  // No conflict clause on the log row: the delivery was looked up first in the same transaction, so a conflict here is a bug, and fails loudly.
  const logDelivery = sqlite.query<never, [string, string, string, string, string | null, string | null, Outcome, RefusalReason | null, number]>(
    'INSERT INTO webhook_deliveries (id, store_id, platform, topic, dedupe_key, product_id, outcome, reason, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const isLogged = sqlite.query<{ found: 1 }, [string, string]>('SELECT 1 AS found FROM webhook_deliveries WHERE store_id = ? AND dedupe_key = ?');
  const countDuplicate = sqlite.query<never, [string, string]>('UPDATE webhook_deliveries SET duplicates = duplicates + 1 WHERE store_id = ? AND dedupe_key = ?');
  const productVersion = sqlite.query<{ version: number }, [string, string]>('SELECT platform_updated_at AS version FROM products WHERE store_id = ? AND product_id = ?');

  /**
   * One delivery inside the group's transaction: the log row is the dedupe point, so a delivery seen
   * before is only counted. A refused delivery is logged without its key: it must never stand in for
   * a genuine delivery of the same event that has yet to arrive.
   */
  function applyOne(delivery: DeliveryToCommit, uninstalled: Set<string>): Settled {
    const { effect, keyedRemovalOf } = asApplied(delivery, uninstalled.has(delivery.storeId));
    const { storeId } = delivery;
    const dedupeKey = effect.kind === 'refuse' ? null : (delivery.dedupeKey ?? (keyedRemovalOf === null ? null : removalKey(keyedRemovalOf, productVersion.get(storeId, keyedRemovalOf)?.version ?? null)));
    if (dedupeKey !== null && isLogged.get(storeId, dedupeKey)) {
      countDuplicate.run(storeId, dedupeKey);
      return { outcome: 'duplicate' };
    }
    const result = apply(delivery, effect);
    if (effect.kind === 'deactivate') uninstalled.add(storeId);
    logDelivery.run(delivery.id, storeId, delivery.platform, delivery.topic, result.reason ? null : dedupeKey, result.productId, result.outcome, result.reason ?? null, delivery.at);
    return result.reason ? { outcome: result.outcome, reason: result.reason } : { outcome: result.outcome };
  }

  const settle = sqlite.query<never, [string, string | null, string]>('UPDATE webhook_deliveries SET outcome = ?, reason = ? WHERE id = ?');
  const duplicatesOf = sqlite.query<{ duplicates: number }, [string]>('SELECT duplicates FROM webhook_deliveries WHERE id = ?');
  // A refused removal gives its key back: a later delete of the same product version (platform C's
  // carry no key of their own: webhooks/deliveries.ts removalKey) is then a delivery of its own, not a duplicate.
  const refuse = sqlite.query<never, [string]>("UPDATE webhook_deliveries SET outcome = 'refused', reason = 'product_not_removed', dedupe_key = NULL WHERE id = ?");
  const seen = (deliveryId: string) => duplicatesOf.get(deliveryId)?.duplicates ?? 0;

  return promised<DeliveryRecords>({
    // bun:sqlite's transaction wrapper keeps its BEGIN/COMMIT/ROLLBACK statements prepared (the hot path).
    commitGroup: writeTransaction(sqlite, (group, slice) => {
      /** Stores uninstalled earlier in the group (webhooks/deliveries.ts asApplied). */
      const uninstalled = new Set<string>();
      return applyEach(group, slice, (delivery) => applyOne(delivery, uninstalled));
    }),

    settle(deliveryId, outcome, reason) {
      settle.run(outcome, reason, deliveryId);
    },

    duplicatesOf: seen,

    applyRemoval: writeTransaction(sqlite, (deliveryId, storeId, productId, removedAt, confirmed, at) => {
      const outcome = products.remove(storeId, productId, removedAt, confirmed, at);
      settle.run(outcome, null, deliveryId);
      return outcome;
    }),

    refuseRemoval: writeTransaction(sqlite, (deliveryId, duplicatesBefore) => {
      if (seen(deliveryId) > duplicatesBefore) return false;
      refuse.run(deliveryId);
      return true;
    }),
  });
}
