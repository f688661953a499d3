import type { Availability } from '../db/schema/index.ts';

/**
 * One purchasable variant of a product (a size, a colour...), mapped from the platform's own
 * variant: platform A's `variants[]`, platform B's `variants` (include=variants), platform C's
 * variations (`GET /wc/v3/products/{id}/variations`). Values are kept as the platform sent them
 * (trimmed to a length cap); nothing here has been validated for publishing.
 */
export interface ProductVariant {
  /** The platform's variant id, as a string. */
  variantId: string;
  /** The platform's name for the variant (`Olive / M`); null when it has none. */
  title: string | null;
  sku: string | null;
  /** The barcode field as sent: may be anything. Only `lib/gtin.ts` decides what is a publishable GTIN. */
  barcode: string | null;
  /** Manufacturer part number, where the platform has the field (platform B). */
  mpn: string | null;
  /** Decimal string as sent (no float rounding); null when unknown. */
  price: string | null;
  /** The "was" price shown struck through, when the platform has one and it is above `price`. */
  compareAtPrice: string | null;
  availability: Availability | null;
  /** The variant's value for each product option, by option name: `{ Color: 'Olive', Size: 'M' }`. */
  options: Record<string, string>;
  /** Absolute image URL of the variant, when it has its own. */
  image: string | null;
  /** The storefront URL that selects this variant, when the platform has one. */
  url: string | null;
}

/**
 * Catalogue data of one product as a platform describes it, already mapped to svc's fields. Built by
 * the per-platform mappers (`platformAProduct`, `platformBProduct`, `platformCProduct`), which take the
 * platform's documented payloads, so anything that reads products from a platform (webhooks, jobs,
 * a catalogue import) maps them the same way.
 *
 * Product-level `price` is the lowest variant price (the platform's product price when it lists no
 * variants); `availability` is `in_stock` when any variant is, else `backorder` when any is, else
 * `out_of_stock`. `sku`, `barcode` and `mpn` are the product's own; a platform without product-level
 * identifiers (A) gives a single-variant product its variant's.
 */
export interface ProductData {
  productId: string;
  handle: string | null;
  title: string;
  descriptionHtml: string | null;
  price: string | null;
  availability: Availability | null;
  sku: string | null;
  /** As sent; see ProductVariant.barcode. */
  barcode: string | null;
  mpn: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  /** The product's option names in the platform's order (`['Color', 'Size']`); empty for a single-variant product. */
  options: string[];
  /** Every variant, in the platform's order (at most MAX_VARIANTS). A single-variant product has one (or none when the platform sends none). */
  variants: ProductVariant[];
  /** The platform's modification time, epoch ms (for platform C: the newest of the product and its variations). */
  updatedAt: number;
  /** The platform's payload, kept with the row. */
  raw: unknown;
  /**
   * `raw` as the JSON it arrived in, when the caller holds it (a verified webhook body, as its UTF-8
   * bytes): stored as is, neither serialised nor encoded again.
   */
  rawJson?: string | Uint8Array;
}

/** Variants kept per product: more than any platform allows by default (A: 2048 in new versions, B: 600). */
export const MAX_VARIANTS = 2048;

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

/**
 * A category (platform A: a collection) or content page, mapped from the platform's list item: the
 * fields the widget and the signals need to find and link it.
 */
export interface EntryData {
  /** The platform's id, as a string. */
  entryId: string;
  /** The handle or slug in its storefront URL. */
  handle: string | null;
  title: string;
  /** Absolute storefront URL, when known. */
  url: string | null;
  /** The platform's modification time (epoch ms); null where its API reports none. */
  updatedAt: number | null;
}

/** One page of a platform's list (products, categories or pages), read for a catalogue sync. */
export interface CatalogPage<T> {
  items: T[];
  /** Where the following page starts (the platform's cursor or the next page number); null: this was the last page. */
  next: string | null;
  /** How long the platform's rate limit needs before the next request (0: ask now). */
  waitMs: number;
}
