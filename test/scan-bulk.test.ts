import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { foreignWriteInProgress } from './helpers/foreign-writer.ts';
import { TELEMETRY, scanCount, scanPayload, signedInit, tokenInit } from './helpers/probe.ts';

const BULK = '/api/v1/probe/scan-bulk';
const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(async () => {
  await t?.close();
});


/** A valid scan of page `n` at minute `n` (distinct (url, scannedAt) pairs per n). */
const item = (n: number, overrides: Record<string, unknown> = {}) =>
  scanPayload({ url: `https://shop.example.com/p/${n}`, scannedAt: new Date(NOW - n * 60_000).toISOString(), ...overrides });

interface BulkBody {
  inserted: number;
  skipped: number;
  errors: { index: number; error: string; detail: string }[];
}

async function bulkAs(key: string, scans: unknown[]): Promise<Response> {
  return t.request(BULK, signedInit(key, JSON.stringify({ scans }), NOW));
}

async function okBulk(key: string, scans: unknown[]): Promise<BulkBody> {
  const response = await bulkAs(key, scans);
  expect(response.status).toBe(200);
  return (await response.json()) as BulkBody;
}

describe('bulk ingest (spec §4.2, DESIGN §5)', () => {
  test('mixed valid and invalid items: invalid ones are reported by index, valid ones stored', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = await okBulk(key, [item(1), { signals: {} }, item(2), 'not an object', item(3, { hostname: 'bad host/x' })]);
    expect(body.inserted).toBe(2);
    expect(body.skipped).toBe(0);
    expect(body.errors.map((e) => [e.index, e.error])).toEqual([
      [1, 'missing_field'],
      [3, 'invalid_payload'],
      [4, 'invalid_field'],
    ]);
    expect(body.errors.every((e) => typeof e.detail === 'string' && e.detail.length > 0)).toBe(true);
    expect(await scanCount(t)).toBe(2);
  });

  test('items go through the same normaliser as the single endpoint (degraded fields kept in data)', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    await okBulk(key, [item(1, { pageType: 'nonsense', extra: 42 })]);
    const row = (await t.query('SELECT page_type, data FROM scans'))[0] as { page_type: string | null; data: string };
    expect(row.page_type).toBeNull();
    expect(JSON.parse(row.data)).toEqual({ pageType: 'nonsense', extra: 42 });
  });

  test('duplicates on (url, scannedAt) within one batch are skipped', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = await okBulk(key, [item(1), item(2), item(1, { quality: { grade: 'A', percentage: 99 } }), item(2)]);
    expect(body).toEqual({ inserted: 2, skipped: 2, errors: [] });
    expect(await scanCount(t)).toBe(2);
  });

  test('the same url at another scannedAt is not a duplicate', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = await okBulk(key, [item(1), item(1, { scannedAt: new Date(NOW - 1).toISOString() })]);
    expect(body.inserted).toBe(2);
  });

  test('the duplicate key is (url, scannedAt): same url at another time and same time at another url are inserted, both same is skipped', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const at = new Date(NOW - 60_000).toISOString();
    const stored = scanPayload({ url: 'https://shop.example.com/p/1', scannedAt: at });
    expect(await okBulk(key, [stored])).toEqual({ inserted: 1, skipped: 0, errors: [] });
    const sameUrlLater = { ...stored, scannedAt: new Date(NOW - 30_000).toISOString() };
    const sameTimeOtherUrl = { ...stored, url: 'https://shop.example.com/p/2' };
    const sameBoth = { ...stored, quality: { grade: 'B', percentage: 80 } };
    expect(await okBulk(key, [sameUrlLater])).toEqual({ inserted: 1, skipped: 0, errors: [] });
    expect(await okBulk(key, [sameTimeOtherUrl])).toEqual({ inserted: 1, skipped: 0, errors: [] });
    expect(await okBulk(key, [sameBoth])).toEqual({ inserted: 0, skipped: 1, errors: [] });
    const keys = (await t.query('SELECT url, scanned_at FROM scans ORDER BY url, scanned_at')) as { url: string; scanned_at: number }[];
    expect(keys.map((k) => [k.url, k.scanned_at])).toEqual([
      ['https://shop.example.com/p/1', NOW - 60_000],
      ['https://shop.example.com/p/1', NOW - 30_000],
      ['https://shop.example.com/p/2', NOW - 60_000],
    ]);
  });

  test('duplicates of rows stored by an earlier bulk request are skipped', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    expect(await okBulk(key, [item(1), item(2)])).toEqual({ inserted: 2, skipped: 0, errors: [] });
    expect(await okBulk(key, [item(2), item(3)])).toEqual({ inserted: 1, skipped: 1, errors: [] });
    expect(await scanCount(t)).toBe(3);
  });

  test('duplicates of rows stored by the telemetry endpoint are skipped', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    expect((await t.request(TELEMETRY, signedInit(key, JSON.stringify(item(7)), NOW))).status).toBe(204);
    expect(await okBulk(key, [item(7)])).toEqual({ inserted: 0, skipped: 1, errors: [] });
  });

  test('the telemetry endpoint keeps storing exact duplicates (not idempotent)', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    await okBulk(key, [item(7)]);
    const body = JSON.stringify(item(7));
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    expect(await scanCount(t)).toBe(3);
  });

  testSqliteOnly('the lock is SQLite\'s one write lock of the file (PostgreSQL locks rows)', 'a bulk request that meets a write of another connection (CLI, checkpointer) waits for it and is stored, never refused as locked', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    // Its duplicate probe reads before it writes: started DEFERRED, it could not take the write lock held meanwhile.
    const foreign = await foreignWriteInProgress(t.config.databaseFile);
    const body = await okBulk(key, [item(1), item(2)]);
    await foreign.committed;
    expect(body).toEqual({ inserted: 2, skipped: 0, errors: [] });
    expect(await scanCount(t)).toBe(2);
  });

  test('two racing bulk requests with the same scans store each pair once', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const scans = Array.from({ length: 300 }, (_, i) => item(i));
    const [a, b, c] = await Promise.all([okBulk(key, scans), okBulk(key, scans.slice(100)), okBulk(key, scans.toReversed())]);
    expect(a.inserted + b.inserted + c.inserted).toBe(300);
    expect(a.skipped + b.skipped + c.skipped).toBe(300 + 200 + 300 - 300);
    expect(await scanCount(t)).toBe(300);
    const [distinct] = (await t.query('SELECT count(*) AS n FROM (SELECT DISTINCT url, scanned_at FROM scans) AS pairs')) as { n: number }[];
    expect(distinct!.n).toBe(300);
  });

  test('1001 items are 400 and nothing is stored', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '5000' } });
    const key = await t.keyWith('probe:scan');
    const response = await bulkAs(key, Array.from({ length: 1001 }, (_, i) => item(i)));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('too_many_scans');
    expect(await scanCount(t)).toBe(0);
  });

  test('1000 items are accepted in one request', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    expect((await okBulk(key, Array.from({ length: 1000 }, (_, i) => item(i)))).inserted).toBe(1000);
  });

  test('a large signed body, hashed in slices, is verified over every byte: accepted as signed, 401 invalid_signature with one byte changed near its end', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify({ scans: Array.from({ length: 1000 }, (_, i) => item(i, { notes: 'n'.repeat(1_500) })) });
    expect(body.length).toBeGreaterThan(1024 * 1024); // several slices
    const init = signedInit(key, body, NOW);
    const tampered = body.slice(0, -20) + (body.at(-20) === '1' ? '2' : '1') + body.slice(-19);
    const response = await t.request(BULK, { ...init, body: tampered });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_signature');
    expect(await scanCount(t)).toBe(0);
    expect((await okBulk(await t.keyWith('probe:scan'), JSON.parse(body).scans)).inserted).toBe(1000); // a fresh bucket
  });

  test('signed bodies of exactly one hashing slice (256 KiB, hashed at once) and one byte more (hashed in two) are verified over every byte', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const scans = Array.from({ length: 100 }, (_, i) => item(i, { notes: 'n'.repeat(2_000) }));
    const json = JSON.stringify({ scans });
    for (const size of [256 * 1024, 256 * 1024 + 1]) {
      const key = await t.keyWith('probe:scan');
      const body = json + ' '.repeat(size - json.length); // trailing JSON whitespace, the last byte signed too
      expect(Buffer.byteLength(body)).toBe(size);
      const init = signedInit(key, body, NOW);
      const tampered = await t.request(BULK, { ...init, body: `${body.slice(0, -1)}\n` });
      expect(tampered.status).toBe(401);
      expect(((await tampered.json()) as { error: string }).error).toBe('invalid_signature');
      const accepted = await t.request(BULK, init);
      expect(accepted.status).toBe(200);
    }
    expect(await scanCount(t)).toBe(100); // the second body's scans were skipped as duplicates
  });

  test('an empty batch, a missing scans array and unknown fields are 400', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    for (const body of [{ scans: [] }, {}, { scans: {} }, { scans: [item(1)], extra: 1 }, [item(1)]]) {
      const response = await t.request(BULK, signedInit(key, JSON.stringify(body), NOW));
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    }
    expect(await scanCount(t)).toBe(0);
  });

  test('bulk requests authenticate like telemetry: a bad signature or no credentials is 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify({ scans: [item(1)] });
    const tampered = signedInit(key, body, NOW);
    tampered.body = JSON.stringify({ scans: [item(2)] });
    expect((await t.request(BULK, tampered)).status).toBe(401);
    expect((await t.request(BULK, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status).toBe(401);
    expect(await scanCount(t)).toBe(0);
  });

  test('a verified lead token authenticates a bulk request (mode 1)', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const { apiToken } = await t.leads.create('bulk@example.com', true);
    const response = await t.request(BULK, tokenInit(apiToken, { scans: [item(1)] }));
    expect(response.status).toBe(200);
    expect(await scanCount(t)).toBe(1);
  });

  test('a bulk body may exceed SVC_MAX_BODY_BYTES (which bounds one scan)', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_MAX_BODY_BYTES: '1024' } });
    const key = await t.keyWith('probe:scan');
    const scans = Array.from({ length: 20 }, (_, i) => item(i));
    expect(JSON.stringify({ scans }).length).toBeGreaterThan(1024);
    expect((await okBulk(key, scans)).inserted).toBe(20);
  });

  test('each item is stored as its own bytes decode, whatever its neighbours: non-ASCII, escaped, 70 KB', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const notes = new Map<number, string>([[3, 'Grüner Tee – 緑茶 😀'], [70, 'ascii'], [71, 'large'], [72, 'é'], [140, '\\u00e9 escaped']]);
    const large = 'x'.repeat(70_000);
    const scans = Array.from({ length: 150 }, (_, i) =>
      item(i, { note: notes.get(i) ?? `n${i}`, pad: 'p'.repeat(900), signals: i === 71 ? { title: { value: 'T' }, large } : { title: { value: 'T' } } }));
    expect(await okBulk(key, scans)).toEqual({ inserted: 150, skipped: 0, errors: [] });
    const stored = (await t.query('SELECT url, signals, data FROM scans')) as { url: string; signals: string; data: string }[];
    const noteOf = new Map(stored.map((row) => [row.url, (JSON.parse(row.data) as { note: string }).note]));
    for (const [i, note] of notes) expect(noteOf.get(`https://shop.example.com/p/${i}`)).toBe(note);
    expect(new Set(noteOf.values()).size).toBe(150);
    const largeRow = stored.find((row) => row.url === 'https://shop.example.com/p/71')!;
    expect((JSON.parse(largeRow.signals) as { large: string }).large).toBe(large);
  });

  test('an item that is not valid UTF-8 is 400 malformed_json naming it, whatever its neighbours, and nothing is stored', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = Buffer.from(JSON.stringify({ scans: [item(1), item(2, { note: 'é' }), item(3, { note: 'XX' }), item(4)] }));
    body[body.indexOf('XX')] = 0xff;
    const timestamp = String(NOW);
    const signature = new Bun.CryptoHasher('sha256', key).update(`${timestamp}.`).update(body).digest('hex');
    const response = await t.request(BULK, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-probe-key': key, 'x-probe-timestamp': timestamp, 'x-probe-signature': signature } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'malformed_json', detail: 'scans[2] is not valid JSON: The encoded data was not valid for encoding utf-8' });
    expect(await scanCount(t)).toBe(0);
  });
});

describe('bulk rate limiting: one token per scan (DESIGN §5)', () => {
  test('each scan takes one token from the tier bucket', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '10' } });
    const key = await t.keyWith('probe:scan');
    const response = await bulkAs(key, [item(1), item(2), item(3), item(4)]);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-remaining')).toBe('6');
    expect(response.headers.get('ratelimit')).toBe('"agent";r=6;t=24');
  });

  test('invalid items and skipped duplicates count as scans too', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '10' } });
    const key = await t.keyWith('probe:scan');
    const response = await bulkAs(key, [item(1), item(1), { nope: true }]);
    expect(response.headers.get('ratelimit-remaining')).toBe('7');
  });

  test('a batch the bucket cannot cover is 429 and nothing is stored', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_AGENT: '10' } });
    const key = await t.keyWith('probe:scan');
    expect((await bulkAs(key, [item(1), item(2), item(3), item(4)])).status).toBe(200);
    const refused = await bulkAs(key, Array.from({ length: 7 }, (_, i) => item(10 + i)));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: string; tier: string; limit: number; retryAfter: number };
    expect(body).toMatchObject({ error: 'rate_limited', tier: 'agent', limit: 10 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await scanCount(t)).toBe(4);
  });

  test('a bulk 429 Retry-After covers the whole batch: after waiting exactly that long, the same batch passes', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '10' } });
    const key = await t.keyWith('probe:scan');
    expect((await bulkAs(key, [item(1), item(2), item(3), item(4)])).status).toBe(200);
    const batch = Array.from({ length: 7 }, (_, i) => item(10 + i));
    const refused = await bulkAs(key, batch);
    expect(refused.status).toBe(429);
    // 5 tokens left after the refusal's admission took one; the retry needs 7 (its admission's and 6 more).
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBe(12);
    expect(((await refused.json()) as { retryAfter: number }).retryAfter).toBe(12);
    clock.advance(wait * 1000);
    expect((await bulkAs(key, batch)).status).toBe(200);
  });

  test('a batch larger than the tier capacity is 400 batch_exceeds_limit naming the capacity (a 429 could never pass)', async () => {
    const clock = fixedClock(NOW);
    t = await makeTestApp({ clock, env: { SVC_RATE_AGENT: '5' } });
    const key = await t.keyWith('probe:scan');
    const refused = await bulkAs(key, Array.from({ length: 6 }, (_, i) => item(i)));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'batch_exceeds_limit',
      detail: "the batch holds 6 scans, more than the agent tier's capacity of 5 scans per minute (one token per scan); split it into batches of at most 5",
      limit: 5,
      tier: 'agent',
    });
    expect(await scanCount(t)).toBe(0);
    // A batch of exactly the capacity passes (once the bucket refilled the one token the refusal took).
    clock.advance(60_000);
    expect((await bulkAs(key, Array.from({ length: 5 }, (_, i) => item(i)))).status).toBe(200);
  });

  test('the anonymous tier throttles bulk requests before authentication', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_ANONYMOUS: '2' } });
    const body = JSON.stringify({ scans: [item(1)] });
    const init = { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-probe-token': 'unknown' } };
    expect((await t.request(BULK, init)).status).toBe(401);
    expect((await t.request(BULK, init)).status).toBe(401);
    expect((await t.request(BULK, init)).status).toBe(429);
  });
});
