import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { normalizeScan } from '../src/telemetry/payload.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanCount, scanPayload, signedInit } from './helpers/probe.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp({ clock: fixedClock(NOW) });
  key = await t.keyWith('probe:scan');
});
afterAll(() => t.close());

interface StoredScan {
  hostname: string;
  url: string;
  scanned_at: number;
  received_at: number;
  country: string | null;
  platform: string | null;
  platform_confidence: number | null;
  page_type: string | null;
  grade: string;
  percentage: number;
  svc_detected: number | null;
  svc_version: string | null;
  vertical: string | null;
  has_title: number | null;
  has_json_ld: number | null;
  has_robots: number | null;
  signals: Record<string, unknown>;
  quality: Record<string, unknown>;
  data: Record<string, unknown>;
}

let marker = 0;
/** Send `payload` signed, expect 204, and return the row it made (found by a unique marker field). */
async function store(payload: Record<string, unknown>): Promise<StoredScan> {
  const id = `m${++marker}`;
  const response = await t.request(TELEMETRY, signedInit(key, JSON.stringify({ ...payload, testMarker: id }), NOW));
  expect(response.status).toBe(204);
  // The marker as JSON text, on either engine (the document is stored as text on both).
  const [row] = await t.query('SELECT * FROM scans WHERE data LIKE ?', `%"testMarker":"${id}"%`);
  if (!row) throw new Error(`no scan stored with marker ${id}`);
  const parsed = { ...row, signals: JSON.parse(row.signals as string), quality: JSON.parse(row.quality as string), data: JSON.parse(row.data as string) };
  delete parsed.data.testMarker;
  return parsed as unknown as StoredScan;
}

async function rejected(body: string): Promise<{ status: number; body: { error: string; detail: string } }> {
  const response = await t.request(TELEMETRY, signedInit(key, body, NOW));
  return { status: response.status, body: (await response.json()) as { error: string; detail: string } };
}


describe('spec §2.1 required fields', () => {
  test('malformed JSON is 400', async () => {
    expect(await rejected('{"hostname": "a.com", "signals": {')).toMatchObject({ status: 400, body: { error: 'malformed_json' } });
  });

  test('a body that is not a JSON object is 400', async () => {
    for (const body of ['[]', '"text"', '42', 'null']) expect((await rejected(body)).status).toBe(400);
  });

  test('missing hostname is 400', async () => {
    expect(await rejected(JSON.stringify({ signals: {} }))).toMatchObject({ status: 400, body: { error: 'missing_field' } });
  });

  test('a hostname with a scheme, path, port or whitespace is 400', async () => {
    for (const hostname of ['https://a.com', 'a.com/path', 'a.com:8080', 'a .com', ' a.com', '', 42, 'a'.repeat(254)]) {
      const result = await rejected(JSON.stringify({ hostname, signals: {} }));
      expect({ hostname, status: result.status, error: result.body.error }).toEqual({ hostname, status: 400, error: 'invalid_field' });
    }
  });

  test('missing signals is 400', async () => {
    expect(await rejected(JSON.stringify({ hostname: 'a.com' }))).toMatchObject({ status: 400, body: { error: 'missing_field' } });
  });

  test('signals that are not an object are 400', async () => {
    for (const signals of [[], 'x', null, 1]) {
      expect(await rejected(JSON.stringify({ hostname: 'a.com', signals }))).toMatchObject({ status: 400, body: { error: 'invalid_field' } });
    }
  });

  test('nothing is stored for a rejected payload', async () => {
    const before = await scanCount(t);
    await rejected(JSON.stringify({ hostname: 'a.com' }));
    expect(await scanCount(t)).toBe(before);
  });

  test('the hostname is stored lower-case', async () => {
    expect((await store(scanPayload({ hostname: 'Shop.Example.COM' }))).hostname).toBe('shop.example.com');
  });
});

describe('spec §2.1 defaults', () => {
  test('a minimal payload gets url https://<hostname>/, scannedAt = server time, grade F, percentage 0', async () => {
    const row = await store({ hostname: 'min.example.com', signals: {} });
    expect(row).toMatchObject({ url: 'https://min.example.com/', scanned_at: NOW, received_at: NOW, grade: 'F', percentage: 0 });
    expect(row).toMatchObject({ platform: null, page_type: null, country: null, svc_detected: null, vertical: null });
    expect(row.quality).toEqual({ grade: 'F', percentage: 0 });
    expect(row.data).toEqual({});
  });

  test('a complete valid payload fills every column', async () => {
    const row = await store({
      url: 'https://shop.example.com/products/tea',
      hostname: 'shop.example.com',
      scannedAt: '2026-02-28T10:00:00.123Z',
      platform: { platform: 'platform-b', confidence: 0.92 },
      pageType: 'product',
      svc: { detected: true, version: '1.2.3' },
      signals: { title: { value: 'Tea', length: 3 }, robots: 'index,follow', jsonLd: [{ '@type': 'Product' }] },
      signalPresence: { title: true, description: false, jsonLd: true, openGraph: false, h1: true, canonical: true, robots: true },
      quality: { grade: 'B', percentage: 81.5, title: 9, jsonLd: 7 },
      country: 'nl',
      vertical: 'food',
    });
    expect(row).toMatchObject({
      url: 'https://shop.example.com/products/tea',
      scanned_at: Date.parse('2026-02-28T10:00:00.123Z'),
      platform: 'platform-b',
      platform_confidence: 0.92,
      page_type: 'product',
      svc_detected: 1,
      svc_version: '1.2.3',
      grade: 'B',
      percentage: 81.5,
      country: 'NL',
      vertical: 'food',
      has_title: 1,
      has_json_ld: 1,
      has_robots: 1,
    });
    expect(row.quality).toEqual({ grade: 'B', percentage: 81.5, title: 9, jsonLd: 7 });
    expect(row.data).toEqual({});
  });

  test('the free text of a scan (vertical, svc.version) is stored without NUL characters, as every engine can store it', async () => {
    const row = await store(scanPayload({ url: 'https://nul.example.com/', vertical: 'te\u0000a', svc: { detected: true, version: '1.\u00002' } }));
    expect(row).toMatchObject({ vertical: 'tea', svc_version: '1.2' });
    expect(normalizeScan({ hostname: 'nul.example.com', signals: {}, vertical: '\u0000' }, NOW)).toMatchObject({ ok: true, scan: { vertical: null } });
  });

  test('the server strips query and hash from url', async () => {
    expect((await store(scanPayload({ url: 'https://shop.example.com/p?utm=1&x=2#reviews' }))).url).toBe('https://shop.example.com/p');
  });

  test('two identical payloads make two rows (not idempotent)', async () => {
    const before = await scanCount(t);
    const body = JSON.stringify(scanPayload({ url: 'https://twice.example.com/', scannedAt: '2026-02-28T10:00:00Z' }));
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    expect(await scanCount(t)).toBe(before + 2);
  });

  test('unknown fields are kept in data', async () => {
    const row = await store(scanPayload({ extensionVersion: '4.1', diagnostics: { ms: 120, errors: ['x'] } }));
    expect(row.data).toEqual({ extensionVersion: '4.1', diagnostics: { ms: 120, errors: ['x'] } });
  });
});

describe('spec §2.1 best-effort fields degrade: left out of their column, raw value kept in data, scan accepted', () => {
  const cases: [string, Record<string, unknown>, Partial<StoredScan>][] = [
    ['a url that is not absolute http(s)', { url: 'ftp://shop.example.com/x' }, { url: 'https://shop.example.com/' }],
    ['a relative url', { url: '/products/tea' }, { url: 'https://shop.example.com/' }],
    ['a url over 2048 characters', { url: `https://shop.example.com/${'a'.repeat(2048)}` }, { url: 'https://shop.example.com/' }],
    ['a scannedAt that is not ISO-8601', { scannedAt: 'yesterday' }, { scanned_at: NOW }],
    ['a scannedAt given as epoch ms', { scannedAt: 1772000000000 }, { scanned_at: NOW }],
    ['a scannedAt without a time zone', { scannedAt: '2026-02-28T10:00:00' }, { scanned_at: NOW }],
    ['a platform outside the enum', { platform: { platform: 'wordpress', confidence: 0.5 } }, { platform: null, platform_confidence: 0.5 }],
    ['a platform confidence above 1', { platform: { platform: 'platform-a', confidence: 1.5 } }, { platform: 'platform-a', platform_confidence: null }],
    ['a platform confidence below 0', { platform: { platform: 'custom', confidence: -0.1 } }, { platform: 'custom', platform_confidence: null }],
    ['a platform that is a string', { platform: 'platform-a' }, { platform: null }],
    ['a pageType outside the enum', { pageType: 'blog' }, { page_type: null }],
    ['a grade outside A–F', { quality: { grade: 'G', percentage: 50 } }, { grade: 'F', percentage: 50 }],
    ['a percentage above 100', { quality: { grade: 'A', percentage: 101 } }, { grade: 'A', percentage: 0 }],
    ['a percentage that is a string', { quality: { grade: 'C', percentage: '80' } }, { grade: 'C', percentage: 0 }],
    ['a country that is not ISO 3166-1 alpha-2', { country: 'USA' }, { country: null }],
    ['a reserved country code', { country: 'ZZ' }, { country: null }],
    ['an svc.detected that is not boolean', { svc: { detected: 'yes', version: '1' } }, { svc_detected: null, svc_version: '1' }],
    ['a signalPresence value that is not boolean', { signalPresence: { title: 'yes', jsonLd: true } }, { has_title: null, has_json_ld: 1 }],
    ['a vertical over 64 characters', { vertical: 'v'.repeat(65) }, { vertical: null }],
    ['a vertical that is not a string', { vertical: 7 }, { vertical: null }],
    ['a url with credentials', { url: 'https://user:pw@shop.example.com/' }, { url: 'https://shop.example.com/' }],
    ['an svc.version over 64 characters', { svc: { detected: true, version: '1'.repeat(65) } }, { svc_detected: 1, svc_version: null }],
    ['a per-signal quality score that is not an integer', { quality: { grade: 'B', percentage: 70, title: 'good' } }, { grade: 'B', percentage: 70 }],
    ['an unknown signalPresence key', { signalPresence: { title: true, sitemap: true } }, { has_title: 1 }],
  ];
  for (const [name, fields, expected] of cases) {
    test(name, async () => {
      const row = await store(scanPayload(fields));
      expect(row).toMatchObject(expected);
      const [field, raw] = Object.entries(fields)[0]!;
      expect(row.data[field]).toEqual(raw);
    });
  }

  test('an invalid known signal is dropped from signals and the raw signals kept in data', async () => {
    const signals = { title: { value: 'x'.repeat(2049) }, robots: 'noindex', custom: { a: 1 } };
    const row = await store({ hostname: 'shop.example.com', signals });
    expect(row.signals).toEqual({ robots: 'noindex', custom: { a: 1 } });
    expect(row.data.signals).toEqual(signals);
  });

  test('an explicit valid country is stored upper-case', async () => {
    expect((await store(scanPayload({ country: 'de' }))).country).toBe('DE');
  });
});

describe('pipeline order (DESIGN §7)', () => {
  test('an oversize declared body is 413 before it is read', async () => {
    const body = JSON.stringify(scanPayload({ padding: 'x'.repeat(t.config.maxBodyBytes) }));
    const response = await t.request(TELEMETRY, { ...signedInit(key, body, NOW), headers: { ...(signedInit(key, body, NOW).headers as Record<string, string>), 'content-length': String(body.length) } });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: string }).error).toBe('payload_too_large');
  });

  test('an oversize body without Content-Length is cut off at the limit with 413', async () => {
    const body = JSON.stringify(scanPayload({ padding: 'x'.repeat(t.config.maxBodyBytes) }));
    const stream = new Blob([body]).stream();
    const response = await t.request(TELEMETRY, { ...signedInit(key, body, NOW), body: stream });
    expect(response.status).toBe(413);
  });

  test('authentication comes before parsing: malformed JSON without credentials is 401, not 400', async () => {
    const response = await t.request(TELEMETRY, { method: 'POST', body: '{not json' });
    expect(response.status).toBe(401);
  });

  test('a signed malformed body is 400 malformed_json', async () => {
    expect(await rejected('{not json')).toMatchObject({ status: 400, body: { error: 'malformed_json' } });
  });
});

describe('normalizeScan (shared with the bulk endpoint)', () => {
  test('returns an error code and detail instead of throwing', () => {
    expect(normalizeScan({ signals: {} }, NOW)).toEqual({ ok: false, error: 'missing_field', detail: 'hostname is required' });
  });

  test('a hostname loses one trailing dot only, after lower-casing', () => {
    const host = (hostname: string) => {
      const result = normalizeScan({ hostname, signals: {} }, NOW);
      return result.ok ? result.scan.hostname : result.error;
    };
    expect(['A.Example.COM.', 'a.com..', 'a.com.\n', '.', 'x_y.'].map(host)).toEqual(['a.example.com', 'invalid_field', 'invalid_field', 'invalid_field', 'x_y']);
  });

  test('url: query and fragment are cut wherever they start; the rest is stored as the URL parser serialises it', () => {
    const cases: [string, string][] = [
      ['https://a.com/p#frag?notquery', 'https://a.com/p'],
      ['https://a.com/?', 'https://a.com/'],
      ['https://a.com/p?#', 'https://a.com/p'],
      ['https://a.com/x?y?z#a#b', 'https://a.com/x'],
      ['https://a.com', 'https://a.com/'],
      ['HTTPS://Shop.Example.COM/A/../b/./c', 'https://shop.example.com/b/c'],
      ['https://a.com:443/', 'https://a.com/'],
      ['https://A.COM:8443/X?Q', 'https://a.com:8443/X'],
      ['https://a.com/%3F%23', 'https://a.com/%3F%23'],
      ['https://a.com/x y?z w#v u', 'https://a.com/x%20y'],
      ['http://a.com\\b\\c?d', 'http://a.com/b/c'],
      ['https://bücher.example/x?y', 'https://xn--bcher-kva.example/x'],
      ['https://a.com/ä?x=ü', 'https://a.com/%C3%A4'],
    ];
    for (const [sent, stored] of cases) {
      const result = normalizeScan({ hostname: 'a.com', signals: {}, url: sent }, NOW);
      expect({ sent, stored: result.ok && result.scan.url, data: result.ok && result.scan.data }).toEqual({ sent, stored, data: {} });
    }
  });

  test('url: at most 2048 characters as sent and as stored, else the default url and the raw value in data', () => {
    const url = (sent: string) => {
      const result = normalizeScan({ hostname: 'a.com', signals: {}, url: sent }, NOW);
      return result.ok ? [result.scan.url.length, 'url' in result.scan.data] : null;
    };
    expect(url(`https://a.com/${'x'.repeat(2034)}`)).toEqual([2048, false]);
    expect(url(`https://a.com/${'x'.repeat(2035)}`)).toEqual(['https://a.com/'.length, true]);
    // 2048 as sent; the query goes, so it is stored shorter.
    expect(url(`https://a.com/${'x'.repeat(2030)}?q=1`)).toEqual([2044, false]);
    // 714 as sent, over 4,000 once percent-encoded.
    expect(url(`https://a.com/${'é'.repeat(700)}`)).toEqual(['https://a.com/'.length, true]);
    expect(url('https://user@a.com/')).toEqual(['https://a.com/'.length, true]);
  });

  test('data holds unknown fields in payload order, then refused known fields in a fixed order; its objects have no prototype', () => {
    const payload = JSON.parse('{"z":1,"vertical":7,"url":"ftp://x","b":2,"10":3,"2":4,"signals":{"title":1,"x":[]},"country":"USA","quality":{"title":1.5,"grade":"B"},"hostname":"a.com"}');
    const result = normalizeScan(payload, NOW);
    if (!result.ok) throw new Error(result.error);
    const { data, signals, quality } = result.scan;
    expect(JSON.stringify(data)).toBe('{"2":4,"10":3,"z":1,"b":2,"signals":{"title":1,"x":[]},"url":"ftp://x","quality":{"title":1.5,"grade":"B"},"country":"USA","vertical":7}');
    expect(JSON.stringify(signals)).toBe('{"x":[]}');
    expect(JSON.stringify(quality)).toBe('{"grade":"B","percentage":0}');
    expect([data, signals, quality].map(Object.getPrototypeOf)).toEqual([null, null, null]);
  });

  test('accepts a trailing dot and an IPv4 host', () => {
    const dotted = normalizeScan({ hostname: 'a.com.', signals: {} }, NOW);
    expect(dotted.ok && dotted.scan.hostname).toBe('a.com');
    const ip = normalizeScan({ hostname: '192.0.2.1', signals: {} }, NOW);
    expect(ip.ok && ip.scan.url).toBe('https://192.0.2.1/');
  });
});
