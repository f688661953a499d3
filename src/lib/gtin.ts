/**
 * Barcodes as platforms send them, checked before anything is published as a GTIN. The rule: spaces
 * and hyphens (the separators printed under a barcode) are removed; what is left must be 8, 12, 13 or
 * 14 digits, not all zeros, with a valid GS1 check digit. It is then published as `gtin8`,
 * `gtin12`, `gtin13` or `gtin14`. Anything else is never published, and is reported as a warning on
 * the product so the merchant can fix it on the platform.
 */

export type GtinProperty = 'gtin8' | 'gtin12' | 'gtin13' | 'gtin14';

export type GtinCheck =
  | { valid: true; gtin: string; property: GtinProperty }
  | { valid: false; reason: 'invalid_characters' | 'invalid_length' | 'invalid_check_digit'; detail: string };

const LENGTHS: Record<number, GtinProperty> = { 8: 'gtin8', 12: 'gtin12', 13: 'gtin13', 14: 'gtin14' };

/** The GS1 check digit of the digits before it: weights 3 and 1 alternating from the right. */
export function gs1CheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    const digit = body.charCodeAt(body.length - 1 - i) - 48;
    sum += digit * (i % 2 === 0 ? 3 : 1);
  }
  return (10 - (sum % 10)) % 10;
}

export function checkGtin(barcode: string): GtinCheck {
  const digits = barcode.trim().replace(/[ -]/g, '');
  if (!/^\d+$/.test(digits)) {
    return { valid: false, reason: 'invalid_characters', detail: 'a GTIN is digits only (spaces and hyphens are ignored)' };
  }
  const property = LENGTHS[digits.length];
  if (!property) return { valid: false, reason: 'invalid_length', detail: `${digits.length} digits; a GTIN has 8, 12, 13 or 14` };
  if (/^0+$/.test(digits)) return { valid: false, reason: 'invalid_length', detail: 'all zeros is not a GTIN' };
  const expected = gs1CheckDigit(digits.slice(0, -1));
  const actual = Number(digits.at(-1));
  if (actual !== expected) return { valid: false, reason: 'invalid_check_digit', detail: `check digit is ${actual}, expected ${expected}` };
  return { valid: true, gtin: digits, property };
}

/** The schema.org property for a barcode (`{ gtin13: "..." }`), or nothing when it is not a valid GTIN. */
export function gtinProperty(barcode: string | null): Partial<Record<GtinProperty, string>> {
  if (barcode === null) return {};
  const check = checkGtin(barcode);
  return check.valid ? { [check.property]: check.gtin } : {};
}

/** The normalised GTIN of a barcode, or null when it is not a valid one. */
export function validGtin(barcode: string | null): string | null {
  if (barcode === null) return null;
  const check = checkGtin(barcode);
  return check.valid ? check.gtin : null;
}
