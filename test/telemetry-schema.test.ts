import { describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import type { TelemetryPayload } from '../clients/probe/src/index.ts';
import { telemetryPayload, type TelemetryPayloadSchema } from '../src/telemetry/model.ts';
import { normalizeScan } from '../src/telemetry/payload.ts';

// ---- Compile-time: the probe client's payload type is the schema's, checked by `npm run typecheck`.
// Open-ended `[key: string]: unknown` members (extra payload fields and signals) are left out on
// both sides: the schema says the same with additionalProperties, which TypeBox types do not carry.
type Known<T> = T extends readonly (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? (unknown extends T[K] ? never : K) : K]: Known<T[K]> }
    : T;
/** True only for identical types (not merely mutually assignable: an extra optional field differs). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const clientTypesMatchSchema: Equals<Known<TelemetryPayload>, Known<TelemetryPayloadSchema>> = true;

// ---- Run time: the schema describes exactly the payloads the normaliser stores whole.
const NOW = Date.parse('2026-03-01T12:00:00Z');
const KNOWN_FIELDS = Object.keys(telemetryPayload.properties);

/** Accepted, and no known field set aside in `data` because a rule refused it. */
function storedWhole(payload: unknown): boolean {
  const result = normalizeScan(payload, NOW);
  return result.ok && !Object.keys(result.scan.data).some((field) => KNOWN_FIELDS.includes(field));
}

const FULL = {
  hostname: 'shop.example.com',
  url: 'https://shop.example.com/products/trail-runner?utm=x#top',
  scannedAt: '2026-03-01T11:59:30.123Z',
  platform: { platform: 'platform-a', confidence: 0.93 },
  pageType: 'product',
  svc: { detected: true, version: '1.2.0' },
  signals: {
    title: { value: 'Trail Runner 2 – Café 日本 🎉', length: 24 },
    description: { value: 'Light shoe.', length: 11 },
    canonical: { value: 'https://shop.example.com/products/trail-runner' },
    robots: 'index, follow',
    lang: 'en-GB',
    headings: { h1: ['Trail Runner 2'], h2: ['Fit', 'Care'] },
    openGraph: { 'og:title': 'Trail Runner 2', 'og:type': 'product' },
    jsonLd: [{ '@context': 'https://schema.org', '@type': 'Product', name: 'Trail Runner 2' }],
    customSignal: { anything: [1, 2] },
  },
  signalPresence: { title: true, description: true, jsonLd: true, openGraph: true, h1: true, canonical: true, robots: false },
  quality: { grade: 'B', percentage: 82.5, title: 10, description: 8, keywords: 0, jsonLd: 20, openGraph: -5 },
  country: 'gb',
  vertical: 'outdoor',
  diagnostics: { scanner: 'ci', ms: 812 },
};

/** Each: a field path, then the values the schema and the normaliser must both accept or both refuse. */
const CASES: [path: string, accepted: unknown[], refused: unknown[]][] = [
  ['hostname', ['a.b', 'Shop.Example.COM', 'shop.example.com.', 'intranet', '_dmarc.example.com', 'x'.repeat(63) + '.com'],
    ['', 'https://shop.example.com', 'shop.example.com/path', 'shop.example.com:8080', 'shop example.com', '-a.com', 'a..com', 'x'.repeat(64) + '.com', 7]],
  ['url', ['http://a.com', 'HTTPS://a.com/p?q=1#f', 'https://a.com/' + 'p'.repeat(2000)],
    ['ftp://a.com/', '/relative', 'https://user:pw@a.com/', 'https://a.com/' + 'p'.repeat(2100), 'not a url', 42]],
  ['scannedAt', ['2026-03-01T12:00Z', '2026-03-01T12:00:00+02:00', '2026-03-01t12:00:00.123456789z', '2026-03-01T06:00:00-0530'],
    ['2026-03-01', '2026-03-01 12:00:00Z', '2026-03-01T12:00:00', 1772366400000, 'yesterday']],
  ['platform', [{}, { platform: 'magento' }, { confidence: 0 }, { confidence: 1 }],
    [{ platform: 'shop-x' }, { confidence: 1.5 }, { confidence: -0.1 }, { confidence: '0.5' }, { platform: 'custom', extra: 1 }, 'platform-a']],
  ['pageType', ['home', 'checkout', 'unknown'], ['Product', 'landing', 3]],
  ['svc', [{}, { detected: false }, { version: '' }, { version: 'v'.repeat(64) }],
    [{ detected: 'yes' }, { version: 'v'.repeat(65) }, { version: 1 }, { detected: true, build: 7 }, true]],
  ['signalPresence', [{}, { h1: false }], [{ h1: 'yes' }, { h3: true }, { title: null }, []]],
  ['quality', [{}, { grade: 'F' }, { percentage: 0 }, { percentage: 100 }, { keywords: -1000 }, { jsonLd: 1000 }],
    [{ grade: 'G' }, { grade: 'a' }, { percentage: 101 }, { title: 1.5 }, { title: 1001 }, { stars: 5 }, 'A']],
  ['country', ['DE', 'fr', 'Gb'], ['DEU', 'D', 'd1', 7]],
  ['vertical', ['x', ' outdoor ', 'v'.repeat(64)], ['', '   ', 'v'.repeat(65), 5]],
  ['signals', [{}, { unknownKey: 'kept' }], [[], 'text', null]],
  ['signals.title', [{}, { value: '' }, { value: 't'.repeat(2048), length: 2048 }, { length: -1 }, { value: 'x', extra: true }],
    [{ value: 't'.repeat(2049) }, { value: 1 }, { length: 1.5 }, { length: '3' }, 'Title']],
  ['signals.canonical', [{}, { value: 'https://a.com/' }], [{ value: 'c'.repeat(2049) }, 'https://a.com/']],
  ['signals.robots', ['', 'noindex'], ['r'.repeat(513), ['noindex']]],
  ['signals.lang', ['de', 'l'.repeat(35)], ['l'.repeat(36), 1]],
  ['signals.headings', [{}, { h1: [] }, { h2: ['a', 'b'] }, { h3: 'free' }], [{ h1: 'Title' }, { h1: [1] }, { h2: ['h'.repeat(2049)] }, []]],
  ['signals.openGraph', [{}, { 'og:image': 'https://a.com/i.png' }], [{ 'og:title': 1 }, { 'og:title': 'o'.repeat(2049) }, []]],
  ['signals.jsonLd', [[], [{ '@type': 'Thing' }], ['not an object']], [{ '@type': 'Thing' }, 'x']],
];

/** Checks JSON Schema cannot express; the schema is looser or stricter here, on purpose. */
const KNOWN_GAPS: [path: string, value: unknown, schema: boolean, normaliser: boolean, why: string][] = [
  ['country', 'ZZ', true, false, 'only assigned ISO 3166-1 codes are stored'],
  ['scannedAt', '2026-13-01T00:00Z', true, false, 'the date must exist'],
  ['scannedAt', '2026-03-01T12:05:01Z', true, false, 'more than 5 minutes ahead of server time is refused'],
  ['signals.title', { value: null }, false, true, 'a null title value is tolerated'],
];

function withValue(path: string, value: unknown): Record<string, unknown> {
  const payload = structuredClone(FULL) as Record<string, any>;
  const [field, key] = path.split('.') as [string, string | undefined];
  if (key === undefined) payload[field] = value;
  else payload[field][key] = value;
  return payload;
}

const verdicts = (payload: unknown) => ({ schema: Value.Check(telemetryPayload, payload), normaliser: storedWhole(payload) });

describe('the telemetry payload schema (src/telemetry/model.ts) matches the normaliser', () => {
  test('the client payload type is the schema type (compile-time check, run by npm run typecheck)', () => {
    expect(clientTypesMatchSchema).toBe(true);
  });

  test('a payload using every field is accepted by both and stored whole', () => {
    expect(verdicts(FULL)).toEqual({ schema: true, normaliser: true });
    expect(verdicts({ hostname: 'a.com', signals: {} })).toEqual({ schema: true, normaliser: true });
  });

  test('without hostname or signals both refuse it', () => {
    const { hostname: _h, ...noHostname } = FULL;
    const { signals: _s, ...noSignals } = FULL;
    for (const payload of [noHostname, noSignals, [], 'scan', null]) expect(verdicts(payload)).toEqual({ schema: false, normaliser: false });
  });

  for (const [path, accepted, refused] of CASES) {
    test(`${path}: both accept the same values and refuse the same values`, () => {
      for (const value of accepted) expect({ value, ...verdicts(withValue(path, value)) }).toEqual({ value, schema: true, normaliser: true });
      for (const value of refused) expect({ value, ...verdicts(withValue(path, value)) }).toEqual({ value, schema: false, normaliser: false });
    });
  }

  test('the known gaps are exactly as documented', () => {
    for (const [path, value, schema, normaliser] of KNOWN_GAPS) expect({ path, ...verdicts(withValue(path, value)) }).toEqual({ path, schema, normaliser });
  });

  test('every top-level field of the schema is exercised above', () => {
    const covered = new Set(CASES.map(([path]) => path.split('.')[0]));
    expect(KNOWN_FIELDS.filter((field) => !covered.has(field))).toEqual([]);
  });
});
