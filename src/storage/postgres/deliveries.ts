import { and, eq } from 'drizzle-orm';
import { orderSignals, products, webhookDeliveries } from './db/schema/index.ts';
import { applyEach } from '../../lib/group-commit.ts';
import { newId } from '../../lib/ids.ts';
import type { RefusalReason } from '../../platforms/types.ts';
import { asApplied, removalKey, type DeliveryEffect, type DeliveryToCommit, type Outcome, type Settled } from '../../webhooks/deliveries.ts';
import { queuedJob } from '../../webhooks/queue.ts';
import type { DeliveryRecords } from '../stores.ts';
import { productWrites } from './catalog.ts';
import { clientOf, type PostgresClient, type PostgresQueries } from './client.ts';
import { valuesKeptOut } from './errors.ts';
import { insertJob } from './jobs.ts';
import { deactivateStore, recordStoreEvents } from './stores.ts';

const HELD_ELSEWHERE = { outcome: 'refused', reason: 'held_by_other_store' } as const;

// The hot path in plain SQL (as on SQLite): drizzle's building of these statements cost the request
// thread several times what the statements cost the server.
/** Another store of svc's platform-A app than $2 (they share one secret: webhooks/deliveries.ts) holds the product (live or removed) or the order $1. */
const otherAppStore = "store_id IN (SELECT id FROM stores WHERE platform = 'platform-a' AND credential_kind = 'via-app' AND id <> $2)";
const HELD_ELSEWHERE_BY = {
  product: `SELECT 1 FROM products WHERE product_id = $1 AND ${otherAppStore} LIMIT 1`,
  order: `SELECT 1 FROM order_signals WHERE order_id = $1 AND ${otherAppStore} LIMIT 1`,
};
const COUNT_DUPLICATE = 'UPDATE webhook_deliveries SET duplicates = duplicates + 1 WHERE store_id = $1 AND dedupe_key = $2 RETURNING id';
const LOG_DELIVERY = 'INSERT INTO webhook_deliveries (id, store_id, platform, topic, dedupe_key, product_id, outcome, reason, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::bigint)';

/** Webhook deliveries on PostgreSQL (the same contract as src/storage/sqlite/deliveries.ts): each group in one transaction. */
export function postgresDeliveryRecords({ db }: Pick<PostgresClient, 'db'>): DeliveryRecords {
  /** Whether another store of svc's platform-A app holds the product (live or removed) or the order. */
  async function heldElsewhere(tx: PostgresQueries, delivery: DeliveryToCommit, held: 'product' | 'order', id: string): Promise<boolean> {
    if (!delivery.sharesAppSecret) return false;
    return (await clientOf(tx).unsafe(HELD_ELSEWHERE_BY[held], [id, delivery.storeId])).length > 0;
  }

  async function apply(tx: PostgresQueries, delivery: DeliveryToCommit, effect: DeliveryEffect): Promise<{ outcome: Outcome; productId: string | null; reason?: RefusalReason }> {
    const { storeId, at } = delivery;
    switch (effect.kind) {
      case 'upsert': {
        const { productId } = effect.product;
        if (await heldElsewhere(tx, delivery, 'product', productId)) return { ...HELD_ELSEWHERE, productId };
        return { outcome: await productWrites(tx).upsert(storeId, effect.currency, effect.product, effect.description, at), productId };
      }
      case 'remove':
        if (await heldElsewhere(tx, delivery, 'product', effect.productId)) return { ...HELD_ELSEWHERE, productId: effect.productId };
        return { outcome: await productWrites(tx).remove(storeId, effect.productId, effect.removedAt, false, at), productId: effect.productId };
      case 'enqueue':
        await insertJob(tx, queuedJob(effect.job, storeId, effect.payload, at));
        return { outcome: 'queued', productId: effect.productId };
      case 'deactivate':
        await deactivateStore(tx, storeId, at);
        return { outcome: 'deactivated', productId: null };
      case 'privacy':
        await recordStoreEvents(tx, storeId, [delivery.topic], at);
        return { outcome: 'acknowledged', productId: null };
      case 'order':
        if (await heldElsewhere(tx, delivery, 'order', effect.orderId)) return { ...HELD_ELSEWHERE, productId: null };
        await tx.insert(orderSignals).values({ id: newId(), storeId, topic: delivery.topic, orderId: effect.orderId, status: effect.status, receivedAt: at });
        return { outcome: 'recorded', productId: null };
      case 'ignore':
        return { outcome: effect.outcome, productId: null };
      case 'refuse':
        return { outcome: 'refused', productId: null, reason: effect.reason };
    }
  }

  /** The key a delivery is deduplicated by, if any: its own, or a keyless removal's (the product's stored version). */
  async function keyOf(tx: PostgresQueries, delivery: DeliveryToCommit, effect: DeliveryEffect, keyedRemovalOf: string | null): Promise<string | null> {
    if (effect.kind === 'refuse') return null;
    if (delivery.dedupeKey !== null || keyedRemovalOf === null) return delivery.dedupeKey;
    const [stored] = await tx.select({ version: products.platformUpdatedAt }).from(products).where(and(eq(products.storeId, delivery.storeId), eq(products.productId, keyedRemovalOf)));
    return removalKey(keyedRemovalOf, stored?.version ?? null);
  }

  /** One delivery inside the group's transaction, deduplicated by its key and logged (a refusal without its key), as on SQLite. */
  async function applyOne(tx: PostgresQueries, delivery: DeliveryToCommit, uninstalled: Set<string>): Promise<Settled> {
    const { effect, keyedRemovalOf } = asApplied(delivery, uninstalled.has(delivery.storeId));
    const dedupeKey = await keyOf(tx, delivery, effect, keyedRemovalOf);
    if (dedupeKey !== null && (await clientOf(tx).unsafe(COUNT_DUPLICATE, [delivery.storeId, dedupeKey])).length > 0) return { outcome: 'duplicate' };
    const result = await apply(tx, delivery, effect);
    if (effect.kind === 'deactivate') uninstalled.add(delivery.storeId);
    // No conflict clause: the key was looked up first in the same transaction, so a conflict here
    // (another instance logging the same delivery at the same time) fails the delivery loudly.
    await clientOf(tx).unsafe(LOG_DELIVERY, [
      delivery.id, delivery.storeId, delivery.platform, delivery.topic, result.reason ? null : dedupeKey, result.productId, result.outcome, result.reason ?? null, delivery.at,
    ]);
    return result.reason ? { outcome: result.outcome, reason: result.reason } : { outcome: result.outcome };
  }

  const settle = (tx: PostgresQueries, deliveryId: string, outcome: Outcome, reason: RefusalReason | null) => tx.update(webhookDeliveries).set({ outcome, reason }).where(eq(webhookDeliveries.id, deliveryId));
  async function duplicatesOf(tx: PostgresQueries, deliveryId: string): Promise<number> {
    const [row] = await tx.select({ duplicates: webhookDeliveries.duplicates }).from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
    return row?.duplicates ?? 0;
  }

  return valuesKeptOut<DeliveryRecords>('deliveries', {
    commitGroup: (group, slice) =>
      db.transaction((tx) => {
        /** Stores uninstalled earlier in the group (webhooks/deliveries.ts asApplied). */
        const uninstalled = new Set<string>();
        // A delivery's failure (EntryFailed) is told without its values by valuesKeptOut.
        return applyEach(group, slice, (delivery) => applyOne(tx, delivery, uninstalled));
      }),

    async settle(deliveryId, outcome, reason) {
      await settle(db, deliveryId, outcome, reason);
    },

    duplicatesOf: (deliveryId) => duplicatesOf(db, deliveryId),

    applyRemoval: (deliveryId, storeId, productId, removedAt, confirmed, at) =>
      db.transaction(async (tx) => {
        const outcome = await productWrites(tx).remove(storeId, productId, removedAt, confirmed, at);
        await settle(tx, deliveryId, outcome, null);
        return outcome;
      }),

    refuseRemoval: (deliveryId, duplicatesBefore) =>
      db.transaction(async (tx) => {
        // Locked first: a duplicate counted meanwhile waits for this transaction, or is seen by it.
        const [row] = await tx.select({ duplicates: webhookDeliveries.duplicates }).from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).for('update');
        if ((row?.duplicates ?? 0) > duplicatesBefore) return false;
        await tx.update(webhookDeliveries).set({ outcome: 'refused', reason: 'product_not_removed', dedupeKey: null }).where(eq(webhookDeliveries.id, deliveryId));
        return true;
      }),
  });
}
