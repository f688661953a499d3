// The API's enum values (`in_stock`, `platform-a`, `collection`) as a person reads them.

const WORDS: Record<string, string> = {
  in_stock: 'In stock',
  out_of_stock: 'Out of stock',
  backorder: 'On backorder',
  'platform-a': 'Platform A',
  'platform-b': 'Platform B',
  'platform-c': 'Platform C',
};

/** `in_stock` -> "In stock", `platform-a` -> "Platform A", `collection` -> "Collection"; null -> "—". */
export function inWords(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const text = String(value);
  const known = WORDS[text];
  if (known) return known;
  const spaced = text.replaceAll(/[_-]+/g, ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

const regions = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** `DE` -> "Germany"; a code Intl does not know stays as it is. */
export function countryName(code: string | number): string {
  const text = String(code);
  try {
    return regions.of(text.toUpperCase()) ?? text;
  } catch {
    return text;
  }
}
