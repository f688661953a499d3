// A verified delivery as the dispatcher hands it to storage (DeliveryRecords.commitGroup,
// src/storage/stores.ts): what it does, already decided from its event, store and credentials, and
// the few rules that depend on what is stored, which every engine applies inside the group's
// transaction the same way (the helpers below).
import type { PreparedProduct } from '../catalog/products.ts';
import type { RefusalReason } from '../platforms/types.ts';
import type { Platform } from '../stores/types.ts';

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

/** What a delivery does when it is not a duplicate; its log row records the outcome. */
export type DeliveryEffect =
  /** The product written through the catalogue's ordering rule (`applied` or `stale`). */
  | ({ kind: 'upsert'; currency: string | null } & PreparedProduct)
  /** The product removed as of `removedAt` by the body's own rules (`removed` or `stale`). */
  | { kind: 'remove'; productId: string; removedAt: number }
  /** A job of `job` queued for the store (`queued`): a fetch, or a removal to confirm with the platform. */
  | { kind: 'enqueue'; job: string; payload: Record<string, unknown>; productId: string }
  /** `app/uninstalled`: the store inactive, its signals withdrawn, both recorded as store events (`deactivated`). */
  | { kind: 'deactivate' }
  /** A privacy request, recorded as a store event named by the topic (`acknowledged`). */
  | { kind: 'privacy' }
  /** An order signal (`recorded`). */
  | { kind: 'order'; orderId: string; status: string | null }
  /** Logged only. */
  | { kind: 'ignore'; outcome: 'ignored_topic' | 'ignored_inactive' }
  /** Logged as refused, with why, and without its dedupe key (it must never stand in for a genuine delivery). */
  | { kind: 'refuse'; reason: RefusalReason };

/** One verified delivery, ready to commit. */
export interface DeliveryToCommit {
  /** Its row in the delivery log (a removal to confirm names it in its job). */
  id: string;
  storeId: string;
  platform: Platform;
  topic: string;
  /** The platform's key for the event: the dedupe point. Null when it has none. */
  dedupeKey: string | null;
  /** Without a key of the platform's, a removal is keyed by the version of the product it removes (`removalKey`): the product's id. */
  keyedRemovalOf: string | null;
  /**
   * The store is one of svc's platform-A app, whose stores share one secret and whose product and
   * order bodies name no shop: a product or order another such store holds is refused
   * (`held_by_other_store`), never taken for this one.
   */
  sharesAppSecret: boolean;
  effect: DeliveryEffect;
  /** When it is applied (the log row's time, the time of its writes). */
  at: number;
}

const IGNORED_INACTIVE: DeliveryEffect = { kind: 'ignore', outcome: 'ignored_inactive' };

/**
 * The delivery as applied inside its group: a store uninstalled earlier in the same group takes
 * its later deliveries as any inactive store does (each delivery's store was read before the group
 * began): ignored, but for privacy requests and refusals, which are logged as before.
 */
export function asApplied(delivery: DeliveryToCommit, uninstalledInGroup: boolean): Pick<DeliveryToCommit, 'effect' | 'keyedRemovalOf'> {
  if (!uninstalledInGroup || delivery.effect.kind === 'privacy' || delivery.effect.kind === 'refuse') return delivery;
  return { effect: IGNORED_INACTIVE, keyedRemovalOf: null };
}

/**
 * A removal without a key of the platform's (platform C's deletes carry only the id) is a
 * duplicate of one already logged for the same version of the product; the confirmation of that
 * one frees the key when the platform still has the product, so a removal refused now never
 * stands in for a later one (src/webhooks/removal.ts). `version`: the stored product's platform
 * modification time, null when svc holds none.
 */
export const removalKey = (productId: string, version: number | null) => `removal:${productId}:${version ?? 'none'}`;
