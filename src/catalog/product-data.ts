// The catalogue's product as svc holds it, the shape every platform adapter maps its own payloads
// into (src/platforms/) and the database schemas' product columns carry (src/storage/sqlite/db/schema/catalog.ts and
// its PostgreSQL twin). The catalogue owns it; a leaf, so the schemas import it without a cycle.

export type Availability = 'in_stock' | 'out_of_stock' | 'backorder';

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
