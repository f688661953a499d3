import type { Clock } from '../lib/clock.ts';
import { checkGtin, validGtin } from '../lib/gtin.ts';
import { htmlToPlainText } from '../lib/html.ts';
import { withoutNulFields } from '../lib/text.ts';
import type { ProductRecords } from '../storage/content.ts';
import type { ProductData, ProductVariant } from './product-data.ts';
import { createDerivedTexts } from './derived-texts.ts';

/** Description texts kept in memory (catalog/derived-texts.ts): ~10,000 products, ~4 million characters. */
const DERIVED_TEXTS = { entries: 10_000, cost: 4_000_000 };

export type UpsertOutcome = 'applied' | 'stale';
export type RemoveOutcome = 'removed' | 'stale';

/**
 * A product as the catalogue holds it: its platform data as last applied (or its tombstone, with
 * `removedAt`), and its sync bookkeeping; times in epoch ms. The variants are kept apart (`variantsOf`).
 */
export interface ProductRecord extends Pick<ProductData, 'productId' | 'handle' | 'title' | 'descriptionHtml' | 'price' | 'availability' | 'sku' | 'barcode' | 'mpn' | 'brand' | 'images' | 'url' | 'options'> {
  /** Internal id (sync order): what enrichment and the variants hang off, and the list's cursor. */
  id: string;
  storeId: string;
  /** The description as plain text, derived once per markup (`DescriptionText`). */
  descriptionText: string | null;
  /** The store's currency when the data was applied. */
  currency: string | null;
  /** The platform's own modification time: an older payload never overwrites a newer one. */
  platformUpdatedAt: number;
  raw: unknown;
  removedAt: number | null;
  /** The start of the latest catalogue sync pass that listed this product. */
  listedAt: number | null;
  /** When svc last applied a write to the row; moves forward on every applied write (the row's version stamp). */
  syncedAt: number;
  createdAt: number;
}

/** The description columns of a stored product, for reusing the text already derived from the same markup. */
export interface StoredDescription {
  html: string | null;
  text: string | null;
}

/**
 * The plain text of the description a product write stores: `known` (null without a description),
 * or to `derive` from what the stored row holds, read in the write's own transaction (its text is
 * reused when its markup is the same).
 */
export type DescriptionText = { known: string | null } | { derive(stored: StoredDescription | null): string | null };

/** A variant as the admin API shows it: as synced, plus the GTIN its barcode yields (null when invalid or absent). */
export interface VariantView extends ProductVariant {
  gtin: string | null;
}

/** Something about a product's data that svc will not publish as sent (the console shows these). */
export interface ProductWarning {
  code: 'invalid_gtin';
  /** `barcode`, or `variants[<variantId>].barcode`. */
  field: string;
  variantId: string | null;
  /** The value as the platform sent it. */
  value: string;
  reason: string;
  detail: string;
}

/** A product as the admin API shows it; `productId` is always the platform's id. */
export interface ProductView {
  productId: string;
  handle: string | null;
  title: string;
  descriptionHtml: string | null;
  descriptionText: string | null;
  /** The lowest price (of the variants, when it has several). */
  price: string | null;
  /** The highest variant price; equal to `price` unless the variants' prices differ. */
  priceMax: string | null;
  currency: string | null;
  availability: string | null;
  sku: string | null;
  barcode: string | null;
  gtin: string | null;
  mpn: string | null;
  brand: string | null;
  images: string[];
  url: string | null;
  options: string[];
  variants: VariantView[];
  warnings: ProductWarning[];
  updatedAt: string;
  syncedAt: string;
}

/** A variant as stored (its row: the product's row id and its position added). */
export function toVariant(row: ProductVariant & { productRowId: string; position: number }): ProductVariant {
  const { productRowId: _row, position: _position, ...variant } = row;
  return variant;
}

/** Barcodes that are not valid GTINs: never published, reported on the product instead. */
export function productWarnings(barcode: string | null, variants: ProductVariant[]): ProductWarning[] {
  const warnings: ProductWarning[] = [];
  const check = (value: string | null, field: string, variantId: string | null) => {
    if (value === null || value.trim() === '') return;
    const result = checkGtin(value);
    if (!result.valid) warnings.push({ code: 'invalid_gtin', field, variantId, value, reason: result.reason, detail: `${field} ${JSON.stringify(value)} is not published as a GTIN: ${result.detail}` });
  };
  check(barcode, 'barcode', null);
  for (const variant of variants) check(variant.barcode, `variants[${variant.variantId}].barcode`, variant.variantId);
  return warnings;
}

const highestPrice = (prices: (string | null)[]): string | null =>
  prices.reduce<string | null>((high, p) => (p !== null && (high === null || Number(p) > Number(high)) ? p : high), null);

export function toProductView(row: ProductRecord, variants: ProductVariant[]): ProductView {
  return {
    productId: row.productId,
    handle: row.handle,
    title: row.title,
    descriptionHtml: row.descriptionHtml,
    descriptionText: row.descriptionText,
    price: row.price,
    priceMax: highestPrice(variants.map((v) => v.price)) ?? row.price,
    currency: row.currency,
    availability: row.availability,
    sku: row.sku,
    barcode: row.barcode,
    gtin: validGtin(row.barcode),
    mpn: row.mpn,
    brand: row.brand,
    images: row.images,
    url: row.url,
    options: row.options,
    variants: variants.map((v) => ({ ...v, gtin: validGtin(v.barcode) })),
    warnings: productWarnings(row.barcode, variants),
    updatedAt: new Date(row.platformUpdatedAt).toISOString(),
    syncedAt: new Date(row.syncedAt).toISOString(),
  };
}

/** Description texts, remembered by product (catalog/derived-texts.ts): one set for every catalogue of a process. */
export const descriptionTexts = () => createDerivedTexts(DERIVED_TEXTS);

/** A product as a write takes it (ProductRecords.upsert): its data as stored, and how the text of its description is had. */
export interface PreparedProduct {
  product: ProductData;
  description: DescriptionText;
}

/** The product's text fields (and its variants') without NUL characters (lib/text.ts): the same object when none holds one. */
function storedData(product: ProductData): ProductData {
  const variants = product.variants.map(withoutNulFields);
  const cleaned = withoutNulFields(product);
  return variants.every((variant, i) => variant === product.variants[i]) ? cleaned : { ...cleaned, variants };
}

/**
 * The synced catalogue over its records, which keep the ordering rule of every write (the platform's
 * own modification time wins: storage/content.ts).
 */
export function createCatalog(records: ProductRecords, clock: Clock, texts = descriptionTexts()) {
  /**
   * The plain text of a product's description. Most updates change stock or prices, not the
   * description: text already derived from the same markup for this product is reused, not derived
   * again (from memory, else from the stored row: a query per delivery costs more than the memo).
   */
  const description = (storeId: string, product: ProductData): DescriptionText => {
    const html = product.descriptionHtml;
    if (html === null) return { known: null };
    const key = `${storeId}\n${product.productId}`;
    const remembered = texts.get(key, html);
    if (remembered !== undefined) return { known: remembered };
    return {
      derive(stored) {
        const text = stored !== null && stored.text !== null && stored.html === html ? stored.text : htmlToPlainText(html);
        texts.remember(key, html, text);
        return text;
      },
    };
  };
  /** The product as written: its text as svc stores platform text (without NUL characters), with its description's text. */
  const prepare = (storeId: string, product: ProductData): PreparedProduct => {
    const stored = storedData(product);
    return { product: stored, description: description(storeId, stored) };
  };
  return {
    ...records,
    /** The product as a write inside a larger transaction takes it (the webhook group commit, the catalogue sync's batches). */
    prepare,
    /**
     * Insert or update catalogue data. A live row is updated by data at least as new as it (equal
     * times happen: platform A's `updated_at` has one-second precision); a removed row only by data
     * strictly newer than its removal.
     */
    upsert(storeId: string, currency: string | null, product: ProductData): Promise<UpsertOutcome> {
      const prepared = prepare(storeId, product);
      return records.upsert(storeId, currency, prepared.product, prepared.description, clock.now());
    },
    /**
     * Remove a product as of `at`. The row stays as a tombstone so an older create/update arriving
     * late cannot resurrect it; a product unknown so far gets a tombstone for the same reason.
     * `confirmed`: the platform itself says the product is gone now (a 404 from its API), which
     * outranks whatever we hold whatever the clocks say.
     */
    remove: (storeId: string, productId: string, at: number, confirmed = false): Promise<RemoveOutcome> => records.remove(storeId, productId, at, confirmed, clock.now()),
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
