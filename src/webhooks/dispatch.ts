import type { Database } from 'bun:sqlite';
import { and, eq, sql } from 'drizzle-orm';
import type { Catalog } from '../catalog/products.ts';
import type { Db } from '../db/index.ts';
import { orderSignals, webhookDeliveries, type StoreRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { WebhookEvent } from '../platforms/types.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import { fetchJobKind } from './product-fetch.ts';
import type { JobQueue } from './queue.ts';

export type Outcome =
  | 'applied'
  | 'stale'
  | 'removed'
  | 'queued'
  | 'deactivated'
  | 'acknowledged'
  | 'recorded'
  | 'ignored_topic'
  | 'ignored_inactive'
  | 'duplicate';

/** A delivery whose signature or secret has been verified for `store`. */
export interface VerifiedDelivery {
  store: StoreRow;
  topic: string;
  dedupeKey: string | null;
  /** Interprets the payload (400 when malformed); only called for an active store or to spot privacy topics. */
  event(): WebhookEvent;
}

interface DispatchDeps {
  db: Db;
  /** The same connection as `db`, for its cached transaction statements. */
  sqlite: Database;
  clock: Clock;
  stores: StoreRegistry;
  catalog: Catalog;
  queue: JobQueue;
  onJobQueued?: (() => void) | undefined;
}

/**
 * Applies verified deliveries: the delivery log row (the dedupe point) and the effect commit in one
 * transaction, so a 200 means both are durable and a retry after a crash is either a duplicate or a
 * first delivery, never half of one.
 */
export function createDispatcher({ db, sqlite, clock, stores, catalog, queue, onJobQueued }: DispatchDeps) {
  /** Inactive stores: acknowledged and ignored (spec §3), except redact requests, which are still logged against the store. */
  function inactiveEvent(delivery: VerifiedDelivery): WebhookEvent | null {
    try {
      const event = delivery.event();
      return event.kind === 'privacy' ? event : null;
    } catch (error) {
      if (error instanceof ApiError) return null;
      throw error;
    }
  }

  function apply(store: StoreRow, topic: string, event: WebhookEvent): { outcome: Outcome; productId: string | null } {
    switch (event.kind) {
      case 'product.upsert':
        return { outcome: catalog.upsert(store.id, store.currency, event.product), productId: event.product.productId };
      case 'product.remove':
        return { outcome: catalog.remove(store.id, event.productId, event.at), productId: event.productId };
      case 'product.fetch':
        queue.enqueue(fetchJobKind(store.platform), store.id, { productId: event.productId });
        return { outcome: 'queued', productId: event.productId };
      case 'store.uninstalled':
        stores.deactivate(store.id);
        return { outcome: 'deactivated', productId: null };
      case 'privacy':
        stores.recordEvent(store.id, topic);
        return { outcome: 'acknowledged', productId: null };
      case 'order':
        db.insert(orderSignals).values({ id: newId(), storeId: store.id, topic, orderId: event.orderId, status: event.status, receivedAt: clock.now() }).run();
        return { outcome: 'recorded', productId: null };
      case 'unhandled':
        return { outcome: 'ignored_topic', productId: null };
    }
  }

  const logDelivery = db
    .insert(webhookDeliveries)
    .values({
      id: sql.placeholder('id'),
      storeId: sql.placeholder('storeId'),
      platform: sql.placeholder('platform'),
      topic: sql.placeholder('topic'),
      dedupeKey: sql.placeholder('dedupeKey'),
      productId: sql.placeholder('productId'),
      outcome: sql.placeholder('outcome'),
      receivedAt: sql.placeholder('receivedAt'),
    })
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.id })
    .prepare();
  const countDuplicate = db
    .update(webhookDeliveries)
    .set({ duplicates: sql`${webhookDeliveries.duplicates} + 1` })
    .where(and(eq(webhookDeliveries.storeId, sql.placeholder('storeId')), eq(webhookDeliveries.dedupeKey, sql.placeholder('dedupeKey'))))
    .prepare();

  /** Thrown inside the transaction to roll the applied effect back when the log says "seen before". */
  const seenBefore = Symbol('duplicate delivery');

  // bun:sqlite's transaction wrapper keeps its BEGIN/COMMIT statements prepared (the hot path).
  const inTransaction = sqlite.transaction((delivery: VerifiedDelivery, event: WebhookEvent | null): Outcome => {
    const { store, topic, dedupeKey } = delivery;
    const result = event ? apply(store, topic, event) : { outcome: 'ignored_inactive' as const, productId: null };
    const logged = logDelivery.get({ id: newId(), storeId: store.id, platform: store.platform, topic, dedupeKey, productId: result.productId, outcome: result.outcome, receivedAt: clock.now() });
    if (!logged) throw seenBefore;
    return result.outcome;
  });

  return function dispatch(delivery: VerifiedDelivery): Outcome {
    const { store } = delivery;
    const event = store.status === 'active' ? delivery.event() : inactiveEvent(delivery);
    let outcome: Outcome;
    try {
      // Apply, then log: a duplicate's log insert conflicts and the whole transaction is undone.
      outcome = inTransaction(delivery, event);
    } catch (error) {
      if (error !== seenBefore) throw error;
      countDuplicate.run({ storeId: store.id, dedupeKey: delivery.dedupeKey });
      outcome = 'duplicate';
    }
    if (outcome === 'queued') onJobQueued?.();
    return outcome;
  };
}

export type Dispatch = ReturnType<typeof createDispatcher>;
