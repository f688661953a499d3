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

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'always' });
const UNITS: [unit: Intl.RelativeTimeFormatUnit, seconds: number][] = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];

/** 0.4 -> "just now", 5 -> "5 seconds ago", 150 -> "2 minutes ago", 7_200 -> "2 hours ago": the largest unit that fits, rounded down. */
export function agoInWords(seconds: number): string {
  if (seconds < 1) return 'just now';
  const [unit, size] = UNITS.find(([, size]) => seconds >= size) ?? ['second', 1];
  return relative.format(-Math.floor(seconds / size), unit);
}
