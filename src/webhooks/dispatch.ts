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
 * first delivery, never half of one. Deliveries arriving together share that transaction (group commit).
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

  /** Thrown inside a delivery's savepoint to roll its applied effect back when the log says "seen before". */
  const seenBefore = Symbol('duplicate delivery');

  /** One delivery, applied and logged inside its own savepoint of the group's transaction. */
  function applyOne(delivery: VerifiedDelivery, event: WebhookEvent | null): Outcome {
    const { store, topic, dedupeKey } = delivery;
    const result = event ? apply(store, topic, event) : { outcome: 'ignored_inactive' as const, productId: null };
    const logged = logDelivery.get({ id: newId(), storeId: store.id, platform: store.platform, topic, dedupeKey, productId: result.productId, outcome: result.outcome, receivedAt: clock.now() });
    if (!logged) throw seenBefore;
    return result.outcome;
  }
  // bun:sqlite's transaction wrapper keeps its statements prepared (the hot path); called inside
  // the group's transaction it runs as a SAVEPOINT, so one delivery's failure undoes only its own writes.
  const inSavepoint = sqlite.transaction(applyOne);

  type Settled = { ok: true; outcome: Outcome } | { ok: false; error: unknown };
  interface Pending {
    delivery: VerifiedDelivery;
    event: WebhookEvent | null;
    resolve(outcome: Outcome): void;
    reject(error: unknown): void;
  }

  function settleOne(entry: Pending): Settled {
    try {
      // Apply, then log: a duplicate's log insert conflicts and its savepoint is undone.
      return { ok: true, outcome: inSavepoint(entry.delivery, entry.event) };
    } catch (error) {
      if (error !== seenBefore) return { ok: false, error };
      countDuplicate.run({ storeId: entry.delivery.store.id, dedupeKey: entry.delivery.dedupeKey });
      return { ok: true, outcome: 'duplicate' };
    }
  }

  /** The group's transaction was lost (SQLite rolls back on some errors): nothing of the group is kept. */
  class GroupLost extends Error {}

  const inGroup = sqlite.transaction((group: Pending[]): Settled[] =>
    group.map((entry) => {
      const settled = settleOne(entry);
      if (!sqlite.inTransaction) throw new GroupLost('the transaction of a webhook delivery group was rolled back');
      return settled;
    }),
  );

  const alone = sqlite.transaction(settleOne);
  let pending: Pending[] = [];
  let groups = 0;

  function answer(entry: Pending, settled: Settled): void {
    if (!settled.ok) return entry.reject(settled.error);
    if (settled.outcome === 'queued') onJobQueued?.();
    entry.resolve(settled.outcome);
  }

  /**
   * Group commit: every delivery verified during one turn of the event loop is applied in one
   * transaction, each in its own savepoint, and each is answered only after the COMMIT. When the
   * group's transaction itself fails, nothing of it was committed and each delivery is tried again alone.
   */
  function commitPending(): void {
    const group = pending;
    pending = [];
    groups++;
    let settled: Settled[];
    try {
      settled = inGroup(group);
    } catch (error) {
      if (group.length === 1) return group[0]!.reject(error);
      for (const entry of group) {
        try {
          answer(entry, alone(entry));
        } catch (failure) {
          entry.reject(failure);
        }
      }
      return;
    }
    group.forEach((entry, i) => answer(entry, settled[i]!));
  }

  /** Resolves with the delivery's outcome once it is committed; rejects with its own error (a 400 from its payload, a failed write). */
  function dispatch(delivery: VerifiedDelivery): Promise<Outcome> {
    const { store } = delivery;
    let event: WebhookEvent | null;
    try {
      event = store.status === 'active' ? delivery.event() : inactiveEvent(delivery);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<Outcome>((resolve, reject) => {
      if (pending.length === 0) setImmediate(commitPending);
      pending.push({ delivery, event, resolve, reject });
    });
  }

  /** Transactions committed for deliveries so far (each holds one or more deliveries). */
  return Object.defineProperty(dispatch, 'groups', { get: () => groups }) as typeof dispatch & { readonly groups: number };
}

export type Dispatch = ReturnType<typeof createDispatcher>;
