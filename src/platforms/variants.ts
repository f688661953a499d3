import { MAX_VARIANTS, type Availability, type ProductVariant } from '../catalog/product-data.ts';
import { safeHttpUrl } from '../lib/html.ts';
import { stringOrNull } from './http.ts';

/** Shared steps of the platform mappers: prices, availability and the variant list are derived the same way for every platform. */

/** A decimal price string (`"89.00"`, `"120"`), or null for anything else (`""`, `"abc"`, negative). */
export function decimalOrNull(value: unknown): string | null {
  const text = stringOrNull(value, 32)?.trim() ?? null;
  return text !== null && /^\d{1,12}(\.\d{1,6})?$/.test(text) ? text : null;
}

/** The compare-at ("was") price, kept only when it is above the price actually charged. */
export function compareAtOrNull(compareAt: unknown, price: string | null): string | null {
  const was = decimalOrNull(compareAt);
  return was !== null && price !== null && Number(was) > Number(price) ? was : null;
}

/** The lowest of the prices given, as its original string; null when none is a price. */
export function lowestPrice(prices: (string | null)[]): string | null {
  let lowest: string | null = null;
  for (const price of prices) if (price !== null && (lowest === null || Number(price) < Number(lowest))) lowest = price;
  return lowest;
}

/** A product is in stock when any variant is, else on backorder when any is, else out of stock. */
export function combinedAvailability(values: (Availability | null)[]): Availability | null {
  const known = values.filter((v): v is Availability => v !== null);
  if (known.length === 0) return null;
  if (known.includes('in_stock')) return 'in_stock';
  return known.includes('backorder') ? 'backorder' : 'out_of_stock';
}

/** Option values by option name, dropping empty names and values (and capping their lengths). */
export function optionValues(pairs: [unknown, unknown][]): Record<string, string> {
  const options: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = stringOrNull(name, 255)?.trim();
    const text = stringOrNull(value, 255)?.trim();
    if (key && text && !(key in options)) options[key] = text;
  }
  return options;
}

/** Option names in first-seen order across the variants (for platforms without a product-level option list). */
export function optionNamesOf(variants: ProductVariant[]): string[] {
  const names = new Set<string>();
  for (const variant of variants) for (const name of Object.keys(variant.options)) names.add(name);
  return [...names];
}

/** Variants mapped by `map` (null = unusable), one per variant id, at most MAX_VARIANTS. */
export function mapVariants(raw: unknown, map: (variant: any) => ProductVariant | null): ProductVariant[] {
  if (!Array.isArray(raw)) return [];
  const seen = new Set<string>();
  const variants: ProductVariant[] = [];
  for (const item of raw) {
    if (variants.length >= MAX_VARIANTS) break;
    const variant = item && typeof item === 'object' ? map(item) : null;
    if (!variant || seen.has(variant.variantId)) continue;
    seen.add(variant.variantId);
    variants.push(variant);
  }
  return variants;
}

/** An absolute http(s) image URL, or null. */
export const imageUrl = (value: unknown): string | null => safeHttpUrl(stringOrNull(value));
