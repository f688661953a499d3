import type { Database } from 'bun:sqlite';
import { sql } from 'drizzle-orm';
import type { CatalogInTransaction } from '../catalog/products.ts';
import type { Db } from '../db/index.ts';
import { orderSignals, type StoreRow } from '../db/schema/index.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { commitGroup, EntryFailed, groupSlice, type GroupOutcome } from '../lib/group-commit.ts';
import { writeTransaction } from '../lib/write-transaction.ts';
import { newId } from '../lib/ids.ts';
import type { RefusalReason, WebhookEvent } from '../platforms/types.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import { fetchJobKind } from './product-fetch.ts';
import { hasApiAccess } from '../platforms/clients.ts';
import { CONFIRM_REMOVAL, type RemovalToConfirm } from './removal.ts';
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
  | 'refused'
  | 'duplicate';

/** What a committed delivery came to; `reason` says why a refused one changed nothing. */
export interface Settled {
  outcome: Outcome;
  reason?: RefusalReason;
}

/** A delivery whose signature or secret has been verified for `store`. */
export interface VerifiedDelivery {
  store: StoreRow;
  topic: string;
  /** The platform's key for the event; null when it has none (a removal is then keyed by the product version it removes). */
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
  /** Written inside the group's transaction. */
  catalog: CatalogInTransaction;
  queue: JobQueue;
  onJobQueued?: (() => void) | undefined;
}

/**
 * Applies verified deliveries: the delivery log row (the dedupe point) and the effect commit in one
 * transaction, so a 200 means both are durable and a retry after a crash is either a duplicate or a
 * first delivery, never half of one. Deliveries arriving together share that transaction (group commit).
 */
/**
 * The most deliveries one transaction considers. A group holds the event loop for its whole length
 * (~0.25 ms of writes per product update): it applies the deliveries verified during the turn before
 * it, up to this many, and of a backlog only a slice of about 2 ms (lib/group-commit.ts, groupSlice),
 * so other requests fit between two groups; larger groups cost less per delivery (bench/webhooks,
 * 64 connections: ~480 us of server CPU per delivery in groups of up to 64 against ~580 us in
 * groups of 16), hence this size.
 */
const MAX_GROUP = 64;

export function createDispatcher({ db, sqlite, clock, stores, catalog, queue, onJobQueued }: DispatchDeps) {
  /**
   * Inactive stores: acknowledged and ignored (spec §3), except redact requests, which are still
   * logged against the store, and refusals, which are logged with their reason.
   */
  function inactiveEvent(delivery: VerifiedDelivery): WebhookEvent | null {
    try {
      const event = delivery.event();
      return event.kind === 'privacy' || event.kind === 'refused' ? event : null;
    } catch (error) {
      if (error instanceof ApiError) return null;
      throw error;
    }
  }

  /**
   * Stores uninstalled earlier in the group being applied: each delivery's store was read before the
   * group began, so their later deliveries in it are ignored here, as any for an inactive store (and
   * those left for a later group, by commitPending).
   */
  const uninstalledInGroup = new Set<string>();

  // Prepared once, like every statement of the delivery path (a query built per call costs several times more).
  const insertOrderSignal = db
    .insert(orderSignals)
    .values({ id: sql.placeholder('id'), storeId: sql.placeholder('storeId'), topic: sql.placeholder('topic'), orderId: sql.placeholder('orderId'), status: sql.placeholder('status'), receivedAt: sql.placeholder('receivedAt') })
    .prepare();

  /**
   * Stores of svc's platform-A app share one secret, and a product or order body names no shop: one
   * signed for one such store and sent with another's shop header would verify. A product (live or
   * removed) or an order another of these stores holds is not taken for this one.
   */
  const APP_STORES = "SELECT id FROM stores WHERE platform = 'platform-a' AND credential_kind = 'via-app' AND id <> ?2";
  const productOfAppStore = sqlite.query<{ found: 1 }, [string, string]>(`SELECT 1 AS found FROM products WHERE product_id = ?1 AND store_id IN (${APP_STORES}) LIMIT 1`);
  const orderOfAppStore = sqlite.query<{ found: 1 }, [string, string]>(`SELECT 1 AS found FROM order_signals WHERE order_id = ?1 AND store_id IN (${APP_STORES}) LIMIT 1`);
  const heldByAnotherStore = (store: StoreRow, held: typeof productOfAppStore, id: string) => store.credentialKind === 'via-app' && held.get(id, store.id) !== null;
  const heldElsewhere = { outcome: 'refused', reason: 'held_by_other_store' } as const;

  function apply(deliveryId: string, store: StoreRow, topic: string, event: WebhookEvent): { outcome: Outcome; productId: string | null; reason?: RefusalReason } {
    switch (event.kind) {
      case 'product.upsert': {
        const { productId } = event.product;
        if (heldByAnotherStore(store, productOfAppStore, productId)) return { ...heldElsewhere, productId };
        return { outcome: catalog.upsert(store.id, store.currency, event.product), productId };
      }
      case 'product.remove': {
        const { productId, at } = event;
        // Where svc can ask the platform, the removal waits for its word that the product is gone
        // (after the 200: src/webhooks/removal.ts); otherwise the body's own rules apply.
        if (hasApiAccess(stores.credentialsOf(store))) {
          queue.enqueue(CONFIRM_REMOVAL, store.id, { productId, at, deliveryId } satisfies RemovalToConfirm);
          return { outcome: 'queued', productId };
        }
        if (heldByAnotherStore(store, productOfAppStore, productId)) return { ...heldElsewhere, productId };
        return { outcome: catalog.remove(store.id, productId, at), productId };
      }
      case 'product.fetch':
        queue.enqueue(fetchJobKind(store.platform), store.id, { productId: event.productId });
        return { outcome: 'queued', productId: event.productId };
      case 'store.uninstalled':
        stores.deactivate(store.id);
        uninstalledInGroup.add(store.id);
        return { outcome: 'deactivated', productId: null };
      case 'privacy':
        stores.recordEvent(store.id, topic);
        return { outcome: 'acknowledged', productId: null };
      case 'order':
        if (heldByAnotherStore(store, orderOfAppStore, event.orderId)) return { ...heldElsewhere, productId: null };
        insertOrderSignal.run({ id: newId(), storeId: store.id, topic, orderId: event.orderId, status: event.status, receivedAt: clock.now() });
        return { outcome: 'recorded', productId: null };
      case 'unhandled':
        return { outcome: 'ignored_topic', productId: null };
      case 'refused':
        return { outcome: 'refused', productId: null, reason: event.reason };
    }
  }

  // Positional statements on the connection: run for every delivery. No conflict clause on the log
  // row: the delivery was looked up first in the same transaction, so a conflict here is a bug, and fails loudly.
  const logDelivery = sqlite.query<never, [string, string, string, string, string | null, string | null, Outcome, RefusalReason | null, number]>(
    'INSERT INTO webhook_deliveries (id, store_id, platform, topic, dedupe_key, product_id, outcome, reason, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const isLogged = sqlite.query<{ found: 1 }, [string, string]>('SELECT 1 AS found FROM webhook_deliveries WHERE store_id = ? AND dedupe_key = ?');
  const countDuplicate = sqlite.query<never, [string, string]>('UPDATE webhook_deliveries SET duplicates = duplicates + 1 WHERE store_id = ? AND dedupe_key = ?');

  const productVersion = sqlite.query<{ version: number }, [string, string]>('SELECT platform_updated_at AS version FROM products WHERE store_id = ? AND product_id = ?');
  /**
   * A removal without a key of the platform's (platform C's deletes carry only the id) is a
   * duplicate of one already logged for the same version of the product; the confirmation of that
   * one frees the key when the platform still has the product, so a removal refused now never
   * stands in for a later one (src/webhooks/removal.ts).
   */
  const removalKey = (storeId: string, productId: string) => `removal:${productId}:${productVersion.get(storeId, productId)?.version ?? 'none'}`;

  /**
   * One delivery inside the group's transaction: the log row is the dedupe point, so a delivery seen
   * before is only counted. A refused delivery is logged without its key: it must never stand in for
   * a genuine delivery of the same event that has yet to arrive.
   */
  function applyOne(delivery: VerifiedDelivery, event: WebhookEvent | null): Settled {
    const { store, topic } = delivery;
    const dedupeKey = event?.kind === 'refused' ? null : (delivery.dedupeKey ?? (event?.kind === 'product.remove' ? removalKey(store.id, event.productId) : null));
    if (dedupeKey !== null && isLogged.get(store.id, dedupeKey)) {
      countDuplicate.run(store.id, dedupeKey);
      return { outcome: 'duplicate' };
    }
    const id = newId();
    const result = event ? apply(id, store, topic, event) : { outcome: 'ignored_inactive' as const, productId: null };
    logDelivery.run(id, store.id, store.platform, topic, result.reason ? null : dedupeKey, result.productId, result.outcome, result.reason ?? null, clock.now());
    return result.reason ? { outcome: result.outcome, reason: result.reason } : { outcome: result.outcome };
  }

  interface Pending {
    delivery: VerifiedDelivery;
    event: WebhookEvent | null;
    resolve(settled: Settled): void;
    reject(error: unknown): void;
  }

  // Its floor, in deliveries: as many as were verified during the turn before the group (see commitPending).
  const slice = groupSlice();
  // bun:sqlite's transaction wrapper keeps its BEGIN/COMMIT/ROLLBACK statements prepared (the hot path).
  const inGroup = writeTransaction(sqlite, (group: Pending[]): Settled[] => {
    uninstalledInGroup.clear();
    slice.start();
    const outcomes: Settled[] = [];
    for (const entry of group) {
      if (!slice.takes(1)) break;
      try {
        const { delivery } = entry;
        outcomes.push(applyOne(delivery, uninstalledInGroup.has(delivery.store.id) ? inactiveEvent(delivery) : entry.event));
      } catch (error) {
        throw new EntryFailed(outcomes.length, error);
      }
    }
    return outcomes;
  });

  const outcome: GroupOutcome<Pending> = {
    refuse: (entry, error) => entry.reject(error),
    fail: (entries, error) => entries.forEach((entry) => entry.reject(error)), // COMMIT itself failed: nothing was kept
  };

  const pending: Pending[] = [];
  /** Deliveries verified since the last group began: those of the current turn. */
  let arrived = 0;
  let groups = 0;

  /**
   * Group commit: every delivery verified during one turn of the event loop is applied in one
   * transaction (up to MAX_GROUP), and each is answered only after its COMMIT. A backlog is applied
   * a slice of about 2 ms per turn, in order. A delivery that fails rolls the whole transaction back;
   * it is refused with its error and the rest of the group is applied again without it
   * (lib/group-commit.ts).
   */
  function commitPending(): void {
    slice.floor = arrived;
    arrived = 0;
    const applied = commitGroup(pending.splice(0, MAX_GROUP), inGroup, outcome);
    pending.unshift(...applied.left);
    // The rest waits for the next turn, so other requests are served between two transactions.
    if (pending.length > 0) setImmediate(commitPending);
    if (applied.committed.length === 0) return;
    // Deliveries still waiting were verified while their store was active: an uninstall now
    // committed makes them ignored too, as it does in its own group.
    if (uninstalledInGroup.size > 0) for (const entry of pending) if (uninstalledInGroup.has(entry.delivery.store.id)) entry.event = inactiveEvent(entry.delivery);
    groups++;
    applied.committed.forEach((entry, i) => {
      if (applied.results[i]!.outcome === 'queued') onJobQueued?.();
      entry.resolve(applied.results[i]!);
    });
  }

  /** Resolves with the delivery's outcome once it is committed; rejects with its own error (a 400 from its payload, a failed write). */
  function dispatch(delivery: VerifiedDelivery): Promise<Settled> {
    const { store } = delivery;
    let event: WebhookEvent | null;
    try {
      event = store.status === 'active' ? delivery.event() : inactiveEvent(delivery);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<Settled>((resolve, reject) => {
      if (pending.length === 0) setImmediate(commitPending);
      pending.push({ delivery, event, resolve, reject });
      arrived++;
    });
  }

  /**
   * The operator stopped the store (stores/removal.ts): its deliveries verified but not yet
   * committed are refused when it is removed (their rows would name no store), with the 401 a
   * delivery for no store gets, or ignored as for any inactive store when it is disconnected.
   */
  function storeStopped(storeId: string, removed: boolean): void {
    for (let i = pending.length - 1; i >= 0; i--) {
      const entry = pending[i]!;
      if (entry.delivery.store.id !== storeId) continue;
      if (!removed) entry.event = inactiveEvent(entry.delivery);
      else {
        pending.splice(i, 1);
        entry.reject(new ApiError(401, 'unverified_webhook', 'the store this delivery names was removed'));
      }
    }
  }

  /** Transactions committed for deliveries so far (each holds one or more deliveries). */
  return Object.defineProperties(dispatch, { groups: { get: () => groups }, storeStopped: { value: storeStopped } }) as typeof dispatch & { readonly groups: number; storeStopped: typeof storeStopped };
}

export type Dispatch = ReturnType<typeof createDispatcher>;
