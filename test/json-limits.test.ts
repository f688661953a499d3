import { afterEach, describe, expect, test } from 'bun:test';
import { JSON_LIMITS } from '../src/lib/json-limits.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload, signedInit, tokenInit } from './helpers/probe.ts';
import { seedStore, signedPlatformADelivery } from './helpers/signals.ts';

// Issue 11, items 1 and 2: bounded parsing and bounded storage per scan.

const BULK = '/api/v1/probe/scan-bulk';
const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(() => t?.close());

const count = async (table: string) => Number((await t.query(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
const scanCount = () => count('scans');
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** A scan whose signals carry `inner` (raw JSON text) under `x`, at nesting depth 2 + the depth of `inner`. */
const scanWith = (inner: string) => `{"hostname":"shop.example.com","signals":{"x":${inner}}}`;
const item = (n: number, overrides: Record<string, unknown> = {}) =>
  scanPayload({ url: `https://shop.example.com/p/${n}`, scannedAt: new Date(NOW - n * 60_000).toISOString(), ...overrides });

async function agentApp(env: Record<string, string> = {}) {
  t = await makeTestApp({ clock: fixedClock(NOW), env });
  return await t.keyWith('probe:scan');
}

async function errorOf(response: Response): Promise<{ status: number; error: string; detail: string; limit?: number }> {
  const body = (await response.json()) as { error: string; detail: string; limit?: number };
  return { status: response.status, ...body };
}

describe('JSON bodies deeper than the nesting limit are refused with 400 before parsing', () => {
  test('a telemetry body nested 200,000 deep (400 KB) is 400 json_too_deep naming the limit, nothing stored', async () => {
    const key = await agentApp();
    const response = await t.request(TELEMETRY, signedInit(key, scanWith(nested(200_000)), NOW));
    const error = await errorOf(response);
    expect(error).toMatchObject({ status: 400, error: 'json_too_deep', limit: 32 });
    expect(error.detail).toContain('32');
    expect(await scanCount()).toBe(0);
  });

  test('nesting exactly at the limit is accepted; one level more is refused', async () => {
    const key = await agentApp();
    // The scan object and signals are 2 levels; x adds the rest.
    const atLimit = await t.request(TELEMETRY, signedInit(key, scanWith(nested(JSON_LIMITS.depth - 2)), NOW));
    expect(atLimit.status).toBe(204);
    const over = await t.request(TELEMETRY, signedInit(key, scanWith(nested(JSON_LIMITS.depth - 1)), NOW));
    expect((await errorOf(over)).error).toBe('json_too_deep');
    expect(await scanCount()).toBe(1);
  });

  test('brackets inside strings (escaped quotes included) do not count as nesting', async () => {
    const key = await agentApp();
    // In an array, a string cut short at its escaped quote would make the brackets after it elements.
    const body = JSON.stringify(scanPayload({ notes: [`\\",${'['.repeat(100)}`, 'ends in a backslash \\', `${'{'.repeat(100)}`] }));
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
  });

  test('an admin body nested deeper than the limit is 400 json_too_deep', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const response = await t.request('/api/v1/admin/faqs', {
      method: 'POST',
      body: `{"question":"q","answer":"a","x":${nested(10_000)}}`,
      headers: { 'content-type': 'application/json', ...bearer(await t.keyWith('admin')) },
    });
    expect((await errorOf(response)).error).toBe('json_too_deep');
  });

  test('a verified webhook delivery nested deeper than the limit is 400 json_too_deep, nothing applied', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_PLATFORM_A_APP_SECRET: 'app-secret' } });
    await seedStore(t, 'platform-a', 'deep.myplatform-a.com');
    let payload: unknown = 1;
    for (let i = 0; i < 1000; i++) payload = [payload];
    const response = await t.request('/api/v1/webhooks/platform-a', signedPlatformADelivery('app-secret', 'deep.myplatform-a.com', 'products/update', { id: 1, x: payload }));
    expect((await errorOf(response)).error).toBe('json_too_deep');
    expect(await count('jobs')).toBe(0);
  });

  test('a bulk item nested deeper than the limit refuses the request with 400 naming the item', async () => {
    const key = await agentApp();
    const body = `{"scans":[${JSON.stringify(item(1))},${scanWith(nested(5_000))}]}`;
    const error = await errorOf(await t.request(BULK, signedInit(key, body, NOW)));
    expect(error).toMatchObject({ status: 400, error: 'json_too_deep', limit: 32 });
    expect(error.detail).toContain('scans[1]');
    expect(await scanCount()).toBe(0);
  });
});

describe('JSON bodies with more values than the limit are refused with 400', () => {
  const values = (n: number) => `[${Array(n).fill('0').join(',')}]`;

  test('a telemetry body over the value limit is 400 json_too_many_values naming it; at the limit it is stored', async () => {
    const key = await agentApp();
    // hostname, signals, the signals object's x array: 4 values besides the array's elements.
    const atLimit = await t.request(TELEMETRY, signedInit(key, scanWith(values(JSON_LIMITS.values - 4)), NOW));
    expect(atLimit.status).toBe(204);
    const over = await errorOf(await t.request(TELEMETRY, signedInit(key, scanWith(values(JSON_LIMITS.values - 3)), NOW)));
    expect(over).toMatchObject({ status: 400, error: 'json_too_many_values', limit: JSON_LIMITS.values });
    expect(over.detail).toContain(String(JSON_LIMITS.values));
    expect(await scanCount()).toBe(1);
  });

  test('object members count once each and keys are not values', async () => {
    const key = await agentApp();
    const members = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}`;
    expect((await t.request(TELEMETRY, signedInit(key, scanWith(members(JSON_LIMITS.values - 4)), NOW))).status).toBe(204);
    expect((await errorOf(await t.request(TELEMETRY, signedInit(key, scanWith(members(JSON_LIMITS.values - 3)), NOW)))).error).toBe('json_too_many_values');
  });

  test('a bulk item with 1.7M keys is 400 json_too_many_values naming the item, nothing stored', async () => {
    const key = await agentApp({ SVC_RATE_AGENT: '5000' });
    const keys = Array.from({ length: 1_700_000 }, (_, i) => `"${i.toString(36)}":0`).join(',');
    const body = `{"scans":[${JSON.stringify(item(1))},{"hostname":"shop.example.com","signals":{},"extra":{${keys}}}]}`;
    expect(body.length).toBeGreaterThan(14 * 1024 * 1024);
    const error = await errorOf(await t.request(BULK, signedInit(key, body, NOW)));
    expect(error).toMatchObject({ status: 400, error: 'json_too_many_values' });
    expect(error.detail).toContain('scans[1]');
    expect(await scanCount()).toBe(0);
  });

  test('the value limit applies to each bulk item, not to the whole batch', async () => {
    const key = await agentApp({ SVC_RATE_AGENT: '5000' });
    const big = (n: number) => item(n, { signals: { x: Array(JSON_LIMITS.values / 2).fill(0) } });
    const body = await t.request(BULK, signedInit(key, JSON.stringify({ scans: [big(1), big(2), big(3)] }), NOW));
    expect(body.status).toBe(200);
    expect(await scanCount()).toBe(3);
  });
});

describe('bulk bodies are parsed in slices', () => {
  test('a large bulk body is scanned in slices: the event loop turns many times while it is parsed', async () => {
    const key = await agentApp({ SVC_RATE_AGENT: '5000' });
    const scans = Array.from({ length: 1000 }, (_, n) => item(n, { signals: { title: { value: 'x'.repeat(2000) } } }));
    const body = JSON.stringify({ scans });
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    let turns = 0;
    let done = false;
    const tick = () => {
      turns++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const response = await t.request(BULK, signedInit(key, body, NOW));
    done = true;
    expect(response.status).toBe(200);
    // 2 MiB in 64 KiB slices: at least 32 turns for the structure scan alone.
    expect(turns).toBeGreaterThanOrEqual(32);
  });

  test('a bulk envelope with "scans" twice is refused (no item escapes the envelope check)', async () => {
    const key = await agentApp();
    const body = `{"scans":[${JSON.stringify(item(1))}],"scans":[${JSON.stringify(item(2))}]}`;
    expect((await errorOf(await t.request(BULK, signedInit(key, body, NOW)))).error).toBe('invalid_request');
    expect(await scanCount()).toBe(0);
  });

  test('bytes between items that are not JSON are refused with 400 malformed_json', async () => {
    const key = await agentApp();
    const body = `{"scans":[${JSON.stringify(item(1))} x ${JSON.stringify(item(2))}]}`;
    expect((await errorOf(await t.request(BULK, signedInit(key, body, NOW)))).error).toBe('malformed_json');
    const unclosed = `{"scans":[${JSON.stringify(item(1))},{"hostname":"a.example"`;
    expect((await errorOf(await t.request(BULK, signedInit(key, unclosed, NOW)))).error).toBe('malformed_json');
    expect(await scanCount()).toBe(0);
  });

  test('more than 1000 items are refused with too_many_scans before any item is parsed', async () => {
    const key = await agentApp();
    const body = `{"scans":[${Array(1001).fill('0').join(',')}`;
    expect((await errorOf(await t.request(BULK, signedInit(key, body, NOW)))).error).toBe('too_many_scans');
  });
});

describe('bounded storage per scan', () => {
  test('a bulk item larger than SVC_MAX_BODY_BYTES is a per-item scan_too_large error; the others are stored', async () => {
    const key = await agentApp({ SVC_MAX_BODY_BYTES: '4096' });
    const large = item(2, { signals: { title: { value: 'x'.repeat(2000) }, body: 'y'.repeat(5000) } });
    const response = await t.request(BULK, signedInit(key, JSON.stringify({ scans: [item(1), large, item(3)] }), NOW));
    expect(response.status).toBe(200);
    const result = (await response.json()) as { inserted: number; errors: { index: number; error: string; detail: string }[] };
    expect(result.inserted).toBe(2);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatchObject({ index: 1, error: 'scan_too_large' });
    expect(result.errors[0]!.detail).toContain('4096');
    expect(await scanCount()).toBe(2);
  });

  test('an item of exactly SVC_MAX_BODY_BYTES is accepted', async () => {
    const key = await agentApp({ SVC_MAX_BODY_BYTES: '4096' });
    const base = JSON.stringify(item(1, { pad: '' }));
    const exact = item(1, { pad: 'p'.repeat(4096 - base.length) });
    expect(JSON.stringify(exact).length).toBe(4096);
    const result = (await (await t.request(BULK, signedInit(key, JSON.stringify({ scans: [exact] }), NOW))).json()) as { inserted: number };
    expect(result.inserted).toBe(1);
  });

  test('telemetry whose unknown fields exceed the data cap (16 KiB) is 400 data_too_large, nothing stored', async () => {
    const key = await agentApp();
    const over = await errorOf(await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ extra: 'x'.repeat(16 * 1024) })), NOW)));
    expect(over.status).toBe(400);
    expect(over.error).toBe('data_too_large');
    expect(over.detail).toContain('16384');
    expect(await scanCount()).toBe(0);
    // Just under the cap is stored: {"extra":"…"} is 12 bytes of JSON around the value.
    const under = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ extra: 'x'.repeat(16 * 1024 - 12) })), NOW));
    expect(under.status).toBe(204);
  });

  test('refused values of known fields count towards the data cap too', async () => {
    const key = await agentApp();
    const response = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload({ vertical: 'v'.repeat(20_000) })), NOW));
    expect((await errorOf(response)).error).toBe('data_too_large');
  });

  test('a bulk item over the data cap is a per-item data_too_large error', async () => {
    const key = await agentApp();
    const response = await t.request(BULK, signedInit(key, JSON.stringify({ scans: [item(1, { extra: 'x'.repeat(17_000) }), item(2)] }), NOW));
    const result = (await response.json()) as { inserted: number; errors: { index: number; error: string }[] };
    expect(result.inserted).toBe(1);
    expect(result.errors).toEqual([expect.objectContaining({ index: 0, error: 'data_too_large' })]);
  });

  test('the data cap is configurable with SVC_MAX_SCAN_DATA_BYTES', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_MAX_SCAN_DATA_BYTES: '100' } });
    const { apiToken } = await t.leads.create('scanner@example.com', true);
    const response = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload({ extra: 'x'.repeat(100) })));
    expect((await errorOf(response)).error).toBe('data_too_large');
    expect((await t.request(TELEMETRY, tokenInit(apiToken, scanPayload({ extra: 'x'.repeat(50) })))).status).toBe(204);
  });
});
