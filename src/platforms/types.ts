import type { ProductData } from '../catalog/product-data.ts';

/**
 * Why a verified delivery changes nothing (recorded in the delivery log). Platforms sign the body
 * only: the topic and shop headers beside it are not covered, so a body is refused under a topic it
 * was not made for, for a shop it does not name, or for a product the platform still has.
 */
export type RefusalReason =
  /** The body's shape is not the topic's own (a product body under a delete or uninstall topic, ...). */
  | 'body_not_for_topic'
  /** The payload names another shop than the shop-domain header. */
  | 'other_shop'
  /** The product or order is held by another store verified with the same secret (stores of svc's platform-A app). */
  | 'held_by_other_store'
  /** A delete, but the platform's API still has the product. */
  | 'product_not_removed';

/** What a verified delivery asks svc to do, independent of the platform it came from. */
export type WebhookEvent =
  | { kind: 'product.upsert'; product: ProductData }
  /**
   * `at`: when the product was removed, by the platform's clock where the delivery carries it; 0
   * when it carries none (the removal is then ordered right after the data svc holds). Where svc has
   * API access to the store, the removal is first confirmed with the platform (src/webhooks/removal.ts).
   */
  | { kind: 'product.remove'; productId: string; at: number }
  | { kind: 'refused'; reason: RefusalReason }
  /** Only an id is known (platform B; platform C variable products and variations): the product is fetched later through the job queue. */
  | { kind: 'product.fetch'; productId: string }
  | { kind: 'store.uninstalled' }
  | { kind: 'privacy' }
  | { kind: 'order'; orderId: string; status: string | null }
  | { kind: 'unhandled' };

/** The platform's word that a product is gone: `at`, when it was removed by the platform's clock, where its API says. */
export interface ProductGone {
  at: number | null;
}

/** Hook registration outcome: the topics now registered with the platform. */
export interface HookRegistration {
  topics: string[];
}

/** One page of a platform's list (products, categories or pages), read for a catalogue sync. */
export interface CatalogPage<T> {
  items: T[];
  /** Where the following page starts (the platform's cursor or the next page number); null: this was the last page. */
  next: string | null;
  /** How long the platform's rate limit needs before the next request (0: ask now). */
  waitMs: number;
}
