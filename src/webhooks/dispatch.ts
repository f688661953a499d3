import type { Catalog } from '../catalog/products.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { commitGroup, EntryFailed, groupSlice, type Committed, type GroupOutcome } from '../lib/group-commit.ts';
import { newId } from '../lib/ids.ts';
import { withoutNul } from '../lib/text.ts';
import { hasApiAccess } from '../platforms/clients.ts';
import type { WebhookEvent } from '../platforms/types.ts';
import type { DeliveryRecords } from '../storage/stores.ts';
import type { StoreRecord, StoreRegistry } from '../stores/registry.ts';
import type { DeliveryEffect, DeliveryToCommit, Settled } from './deliveries.ts';
import { fetchJobKind } from './product-fetch.ts';
import { CONFIRM_REMOVAL, type RemovalToConfirm } from './removal.ts';

export type { Outcome, Settled } from './deliveries.ts';

/** A delivery whose signature or secret has been verified for `store`. */
export interface VerifiedDelivery {
  store: StoreRecord;
  topic: string;
  /** The platform's key for the event; null when it has none (a removal is then keyed by the product version it removes). */
  dedupeKey: string | null;
  /** Interprets the payload (400 when malformed); only called for an active store or to spot privacy topics. */
  event(): WebhookEvent;
}

interface DispatchDeps {
  /** The group commit (and the log it writes). */
  deliveries: Pick<DeliveryRecords, 'commitGroup'>;
  clock: Clock;
  stores: Pick<StoreRegistry, 'credentialsOf'>;
  /** Prepares the products deliveries write (written inside the group's transaction). */
  catalog: Pick<Catalog, 'prepare'>;
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

export function createDispatcher({ deliveries, clock, stores, catalog, onJobQueued }: DispatchDeps) {
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
   * What the delivery does, decided from its event (null: its store is inactive) before its group's
   * transaction; what depends on what is stored (a duplicate, a product or order another store of
   * svc's platform-A app holds, the ordering rule) is decided inside it. Text the platform sent is
   * stored without NUL characters (CONTRIBUTING.md, PostgreSQL).
   */
  function effectOf(deliveryId: string, store: StoreRecord, event: WebhookEvent | null): DeliveryEffect {
    switch (event?.kind) {
      case undefined:
        return { kind: 'ignore', outcome: 'ignored_inactive' };
      case 'product.upsert':
        return { kind: 'upsert', currency: store.currency, ...catalog.prepare(store.id, event.product) };
      case 'product.remove': {
        const { productId, at } = event;
        // Where svc can ask the platform, the removal waits for its word that the product is gone
        // (after the 200: src/webhooks/removal.ts); otherwise the body's own rules apply.
        if (hasApiAccess(stores.credentialsOf(store))) return { kind: 'enqueue', job: CONFIRM_REMOVAL, payload: { productId, at, deliveryId } satisfies RemovalToConfirm, productId };
        return { kind: 'remove', productId, removedAt: at };
      }
      case 'product.fetch':
        return { kind: 'enqueue', job: fetchJobKind(store.platform), payload: { productId: event.productId }, productId: event.productId };
      case 'store.uninstalled':
        return { kind: 'deactivate' };
      case 'privacy':
        return { kind: 'privacy' };
      case 'order':
        return { kind: 'order', orderId: event.orderId, status: event.status === null ? null : withoutNul(event.status) };
      case 'unhandled':
        return { kind: 'ignore', outcome: 'ignored_topic' };
      case 'refused':
        return { kind: 'refuse', reason: event.reason };
    }
  }

  function toCommit({ delivery, event }: Pending): DeliveryToCommit {
    const { store } = delivery;
    const id = newId();
    return {
      id,
      storeId: store.id,
      platform: store.platform,
      topic: withoutNul(delivery.topic),
      dedupeKey: delivery.dedupeKey === null ? null : withoutNul(delivery.dedupeKey),
      keyedRemovalOf: event?.kind === 'product.remove' ? event.productId : null,
      sharesAppSecret: store.credentialKind === 'via-app',
      effect: effectOf(id, store, event),
      at: clock.now(),
    };
  }

  interface Pending {
    delivery: VerifiedDelivery;
    event: WebhookEvent | null;
    resolve(settled: Settled): void;
    reject(error: unknown): void;
  }

  // Its floor, in deliveries: as many as were verified during the turn before the group (see commitPending).
  const slice = groupSlice();
  /** One transaction over the group (DeliveryRecords.commitGroup); a delivery that fails, here or there, fails it with EntryFailed. */
  const inGroup = (group: Pending[]): Promise<Settled[]> => {
    const commits = group.map((entry, i) => {
      try {
        return toCommit(entry);
      } catch (error) {
        throw new EntryFailed(i, error);
      }
    });
    return deliveries.commitGroup(commits, slice);
  };

  const outcome: GroupOutcome<Pending> = {
    refuse: (entry, error) => entry.reject(error),
    fail: (entries, error) => entries.forEach((entry) => entry.reject(error)), // COMMIT itself failed: nothing was kept
  };

  const pending: Pending[] = [];
  /** Deliveries verified since the last group began: those of the current turn. */
  let arrived = 0;
  let groups = 0;
  /** A group is being committed: the next waits for it (groups commit one at a time, in order). */
  let committing = false;

  /**
   * Group commit: every delivery verified during one turn of the event loop is applied in one
   * transaction (up to MAX_GROUP), and each is answered only after its COMMIT. A backlog is applied
   * a slice of about 2 ms per turn, in order. A delivery that fails rolls the whole transaction back;
   * it is refused with its error and the rest of the group is applied again without it
   * (lib/group-commit.ts).
   */
  async function commitPending(): Promise<void> {
    committing = true;
    slice.floor = arrived;
    arrived = 0;
    let applied: Committed<Pending, Settled>;
    try {
      applied = await commitGroup(pending.splice(0, MAX_GROUP), inGroup, outcome);
    } finally {
      committing = false;
    }
    pending.unshift(...applied.left);
    // The rest waits for the next turn, so other requests are served between two transactions.
    if (pending.length > 0) setImmediate(commitPending);
    if (applied.committed.length === 0) return;
    // Deliveries still waiting were verified while their store was active: an uninstall now
    // committed makes them ignored too, as it does in its own group.
    const uninstalled = new Set(applied.committed.filter((_, i) => applied.results[i]!.outcome === 'deactivated').map((entry) => entry.delivery.store.id));
    if (uninstalled.size > 0) for (const entry of pending) if (uninstalled.has(entry.delivery.store.id)) entry.event = inactiveEvent(entry.delivery);
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
      if (pending.length === 0 && !committing) setImmediate(commitPending);
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
