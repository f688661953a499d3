import { countryCode } from '../lib/country.ts';
import { ApiError } from '../lib/errors.ts';

/** The condition every product of the store is sold in (schema.org `itemCondition`). */
export const ITEM_CONDITIONS = ['new', 'used', 'refurbished', 'damaged'] as const;
export const RETURN_WINDOWS = ['finite', 'unlimited', 'not_permitted'] as const;
export const RETURN_FEES = ['free', 'customer_pays', 'shipping_fee'] as const;
export const RETURN_METHODS = ['mail', 'store', 'kiosk'] as const;

export interface DayRange {
  min: number;
  max: number;
}

/** How returns work (schema.org MerchantReturnPolicy). */
export interface ReturnPolicy {
  /** ISO 3166-1 alpha-2 countries the policy applies to. */
  countries: string[];
  window: (typeof RETURN_WINDOWS)[number];
  /** Days to return an item: required with `window: "finite"`, absent otherwise. */
  days?: number;
  /** Who pays: required unless returns are not permitted. */
  fees?: (typeof RETURN_FEES)[number];
  /** The return shipping fee in the store's currency: required with `fees: "shipping_fee"`. */
  shippingFee?: string;
  /** How an item is returned: required unless returns are not permitted. */
  method?: (typeof RETURN_METHODS)[number];
}

/** One shipping rate (schema.org OfferShippingDetails): what it costs to which countries, and how long it takes. */
export interface ShippingRate {
  countries: string[];
  /** In the store's currency; "0.00" is free shipping. */
  price: string;
  /** Business days from order to hand-over to the carrier. */
  handlingDays: DayRange;
  /** Business days in transit. */
  transitDays: DayRange;
}

/** Store-level facts for merchant listings; each is emitted on every offer of the store's signals when set. */
export interface StoreSettings {
  itemCondition?: (typeof ITEM_CONDITIONS)[number];
  returnPolicy?: ReturnPolicy;
  shipping?: ShippingRate[];
}

const MAX_COUNTRIES = 250;
const MAX_RATES = 50;

const invalid = (field: string, rule: string) => new ApiError(400, 'invalid_settings', `${field}: ${rule}`);

function record(value: unknown, field: string, allowed: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, 'must be an object');
  const extra = Object.keys(value).filter((key) => !allowed.includes(key));
  if (extra.length > 0) throw invalid(field, `unknown field ${JSON.stringify(extra[0])} (allowed: ${allowed.join(', ')})`);
  return value as Record<string, unknown>;
}

function oneOf<T extends string>(value: unknown, field: string, choices: readonly T[]): T {
  if (typeof value !== 'string' || !choices.includes(value as T)) throw invalid(field, `expected one of ${choices.join(', ')}`);
  return value as T;
}

function countries(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_COUNTRIES) throw invalid(field, `expected 1 to ${MAX_COUNTRIES} ISO 3166-1 alpha-2 country codes`);
  const codes = value.map((code, i) => {
    const upper = countryCode(code);
    if (!upper) throw invalid(`${field}[${i}]`, `${JSON.stringify(code)} is not an ISO 3166-1 alpha-2 country code`);
    return upper;
  });
  return [...new Set(codes)];
}

function days(value: unknown, field: string, max: number, min = 0): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(field, `expected a whole number of days from ${min} to ${max}`);
  return value;
}

function dayRange(value: unknown, field: string): DayRange {
  const range = record(value, field, ['min', 'max']);
  const min = days(range.min, `${field}.min`, 365);
  const max = days(range.max, `${field}.max`, 365);
  if (min > max) throw invalid(field, 'min must not exceed max');
  return { min, max };
}

function money(value: unknown, field: string): string {
  if (typeof value !== 'string' || !/^\d{1,9}(\.\d{1,2})?$/.test(value)) throw invalid(field, 'expected a decimal amount as a string, e.g. "4.95"');
  return value;
}

function returnPolicy(value: unknown): ReturnPolicy {
  const field = 'returnPolicy';
  const input = record(value, field, ['countries', 'window', 'days', 'fees', 'shippingFee', 'method']);
  const policy: ReturnPolicy = { countries: countries(input.countries, `${field}.countries`), window: oneOf(input.window, `${field}.window`, RETURN_WINDOWS) };
  if (policy.window === 'finite') {
    if (input.days === 0) throw invalid(`${field}.days`, 'a finite return window has at least 1 day (use window "not_permitted" for none)');
    policy.days = days(input.days, `${field}.days`, 3650, 1);
  } else if (input.days !== undefined) {
    throw invalid(`${field}.days`, `only allowed with window "finite"`);
  }
  if (policy.window === 'not_permitted') {
    for (const key of ['fees', 'shippingFee', 'method']) if (input[key] !== undefined) throw invalid(`${field}.${key}`, 'not allowed when returns are not permitted');
    return policy;
  }
  policy.fees = oneOf(input.fees, `${field}.fees`, RETURN_FEES);
  if (policy.fees === 'shipping_fee') policy.shippingFee = money(input.shippingFee, `${field}.shippingFee`);
  else if (input.shippingFee !== undefined) throw invalid(`${field}.shippingFee`, 'only allowed with fees "shipping_fee"');
  policy.method = oneOf(input.method, `${field}.method`, RETURN_METHODS);
  return policy;
}

function shipping(value: unknown): ShippingRate[] {
  if (!Array.isArray(value) || value.length > MAX_RATES) throw invalid('shipping', `expected a list of at most ${MAX_RATES} rates`);
  return value.map((item, i) => {
    const field = `shipping[${i}]`;
    const rate = record(item, field, ['countries', 'price', 'handlingDays', 'transitDays']);
    return {
      countries: countries(rate.countries, `${field}.countries`),
      price: money(rate.price, `${field}.price`),
      handlingDays: dayRange(rate.handlingDays, `${field}.handlingDays`),
      transitDays: dayRange(rate.transitDays, `${field}.transitDays`),
    };
  });
}

/**
 * Validate a whole settings document (the admin API's PUT body and the CLI's `--json`): 400
 * `invalid_settings` naming the first field that breaks its rule. Omitted or null fields are unset.
 */
export function parseStoreSettings(input: unknown): StoreSettings {
  const body = record(input, 'settings', ['itemCondition', 'returnPolicy', 'shipping']);
  const settings: StoreSettings = {};
  if (body.itemCondition !== undefined && body.itemCondition !== null) settings.itemCondition = oneOf(body.itemCondition, 'itemCondition', ITEM_CONDITIONS);
  if (body.returnPolicy !== undefined && body.returnPolicy !== null) settings.returnPolicy = returnPolicy(body.returnPolicy);
  if (body.shipping !== undefined && body.shipping !== null && (body.shipping as unknown[]).length !== 0) settings.shipping = shipping(body.shipping);
  return settings;
}
