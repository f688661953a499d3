import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanCount, scanPayload, signedHeaders, signedInit, tokenInit } from './helpers/probe.ts';
import { wrongEnding } from './helpers/stores.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(async () => {
  await t?.close();
});


async function expectError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: string; detail: string };
  expect(body.error).toBe(error);
  expect(typeof body.detail).toBe('string');
}

describe('spec §5 mode 2: signed API key', () => {
  test('a correctly signed request is stored and answered 204 with an empty body', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const response = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), NOW));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(await scanCount(t)).toBe(1);
  });

  test('the signature over a body with unicode and irregular whitespace verifies on the raw bytes', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const raw = '{ "hostname" :"shop.example.com",\n\t"signals":{"title":{"value":"Café — 日本 \\u00e9 🎉","length":12}} ,  "note": "  spaced  "   }';
    const response = await t.request(TELEMETRY, signedInit(key, raw, NOW));
    expect(response.status).toBe(204);
    const row = (await t.query('SELECT signals FROM scans'))[0] as { signals: string };
    expect(JSON.parse(row.signals).title.value).toBe('Café — 日本 é 🎉');
  });

  test('the same signature fails once the body is re-serialized', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const raw = '{ "hostname" :"shop.example.com",\n\t"signals":{"title":{"value":"Café — 日本","length":9}} }';
    const headers = signedHeaders(key, raw, NOW);
    const reserialized = JSON.stringify(JSON.parse(raw));
    const response = await t.request(TELEMETRY, { method: 'POST', body: reserialized, headers });
    await expectError(response, 401, 'invalid_signature');
    expect(await scanCount(t)).toBe(0);
  });

  test('a timestamp exactly 5 minutes in the past or future is accepted', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW - 300_000))).status).toBe(204);
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW + 300_000))).status).toBe(204);
  });

  test('a timestamp 1 ms beyond 5 minutes either way is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    await expectError(await t.request(TELEMETRY, signedInit(key, body, NOW - 300_001)), 401, 'timestamp_out_of_window');
    await expectError(await t.request(TELEMETRY, signedInit(key, body, NOW + 300_001)), 401, 'timestamp_out_of_window');
    expect(await scanCount(t)).toBe(0);
  });

  test('timestamp_out_of_window says so when the timestamp looks like seconds', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    const seconds = String(Math.floor(NOW / 1000));
    const res = await t.request(TELEMETRY, signedInit(key, body, seconds));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: 'timestamp_out_of_window',
      detail: `X-Probe-Timestamp ${seconds} looks like seconds; send epoch milliseconds (${NOW} now): $(date +%s)000 in a shell, Date.now() in JavaScript`,
    });
    // A stale millisecond timestamp gets the plain message.
    const stale = await t.request(TELEMETRY, signedInit(key, body, NOW - 3_600_000));
    expect((await stale.json()).detail).toBe(`X-Probe-Timestamp is more than 5 minutes from server time (${NOW} epoch milliseconds now)`);
  });

  test('a non-numeric timestamp is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    await expectError(await t.request(TELEMETRY, signedInit(key, body, new Date(NOW).toISOString())), 401, 'invalid_timestamp');
    await expectError(await t.request(TELEMETRY, signedInit(key, body, `${NOW}.5`)), 401, 'invalid_timestamp');
  });

  test('a missing timestamp or signature is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    const { 'x-probe-timestamp': _ts, ...noTimestamp } = signedHeaders(key, body, NOW);
    await expectError(await t.request(TELEMETRY, { method: 'POST', body, headers: noTimestamp }), 401, 'invalid_timestamp');
    const { 'x-probe-signature': _sig, ...noSignature } = signedHeaders(key, body, NOW);
    await expectError(await t.request(TELEMETRY, { method: 'POST', body, headers: noSignature }), 401, 'invalid_signature');
  });

  test('a signature made with another key is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const other = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    const headers = { ...signedHeaders(other, body, NOW), 'x-probe-key': key };
    await expectError(await t.request(TELEMETRY, { method: 'POST', body, headers }), 401, 'invalid_signature');
  });

  test('a signature wrong only in its last characters is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    const headers = signedHeaders(key, body, NOW);
    for (const count of [1, 2, 8]) {
      const signature = wrongEnding(headers['x-probe-signature']!, count);
      await expectError(await t.request(TELEMETRY, { method: 'POST', body, headers: { ...headers, 'x-probe-signature': signature } }), 401, 'invalid_signature');
    }
    expect(await scanCount(t)).toBe(0);
  });

  test('a truncated signature, or the right one with extra characters, is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    const headers = signedHeaders(key, body, NOW);
    const right = headers['x-probe-signature']!;
    for (const signature of [right.slice(0, 32), right.slice(0, 1), `${right}00`]) {
      await expectError(await t.request(TELEMETRY, { method: 'POST', body, headers: { ...headers, 'x-probe-signature': signature } }), 401, 'invalid_signature');
    }
    expect(await scanCount(t)).toBe(0);
  });

  test('the timestamp is signed: a captured signature replayed under a fresh timestamp is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    const captured = signedHeaders(key, body, NOW - 600_000);
    await expectError(await t.request(TELEMETRY, { method: 'POST', body, headers: { ...captured, 'x-probe-timestamp': String(NOW) } }), 401, 'invalid_signature');
    expect(await scanCount(t)).toBe(0);
  });

  test('a key without probe:scan is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('dashboard:read', 'metrics:read');
    await expectError(await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), NOW)), 401, 'insufficient_scope');
  });

  test('a key with the admin scope is accepted', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('admin');
    expect((await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), NOW))).status).toBe(204);
  });

  test('a revoked key is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const { key, record } = await t.keys.create({ scopes: ['probe:scan'] });
    const body = JSON.stringify(scanPayload());
    expect((await t.request(TELEMETRY, signedInit(key, body, NOW))).status).toBe(204);
    await t.keys.revoke(record.id);
    await expectError(await t.request(TELEMETRY, signedInit(key, body, NOW)), 401, 'invalid_api_key');
  });

  test('an unknown key is rejected with 401', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const unknown = `sk_live_${'A'.repeat(43)}`;
    await expectError(await t.request(TELEMETRY, signedInit(unknown, JSON.stringify(scanPayload()), NOW)), 401, 'invalid_api_key');
  });
});

describe('spec §5 mode 1: public token', () => {
  test('a verified lead token is accepted', async () => {
    t = await makeTestApp();
    const { apiToken } = await t.leads.create('verified@example.com', true);
    expect((await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()))).status).toBe(204);
    expect(await scanCount(t)).toBe(1);
  });

  test('a token of an unverified lead is accepted (at the anonymous tier)', async () => {
    t = await makeTestApp();
    const { apiToken } = await t.leads.create('new@example.com');
    const response = await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()));
    expect(response.status).toBe(204);
    expect(response.headers.get('ratelimit-policy')).toBe('"anonymous";q=10;w=60');
  });

  test('a rotated-away token is rejected with 401 and the new one works', async () => {
    t = await makeTestApp();
    const { lead, apiToken } = await t.leads.create('rotate@example.com', true);
    const fresh = (await t.leads.rotate(lead.id))!;
    await expectError(await t.request(TELEMETRY, tokenInit(apiToken, scanPayload())), 401, 'invalid_token');
    expect((await t.request(TELEMETRY, tokenInit(fresh, scanPayload()))).status).toBe(204);
  });

  test('a revoked token is rejected with 401', async () => {
    t = await makeTestApp();
    const { lead, apiToken } = await t.leads.create('revoke@example.com', true);
    await t.leads.revoke(lead.id);
    await expectError(await t.request(TELEMETRY, tokenInit(apiToken, scanPayload())), 401, 'invalid_token');
    expect(await scanCount(t)).toBe(0);
  });

  test('an unknown token is rejected with 401', async () => {
    t = await makeTestApp();
    await expectError(await t.request(TELEMETRY, tokenInit('x'.repeat(43), scanPayload())), 401, 'invalid_token');
  });
});

describe('telemetry authentication (DESIGN §5)', () => {
  test('no authentication headers at all is 401', async () => {
    t = await makeTestApp();
    const response = await t.request(TELEMETRY, { method: 'POST', body: JSON.stringify(scanPayload()), headers: { 'content-type': 'application/json' } });
    await expectError(response, 401, 'missing_credentials');
  });

  test('headers of both modes at once are 401 ambiguous_auth', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW) });
    const key = await t.keyWith('probe:scan');
    const { apiToken } = await t.leads.create('both@example.com', true);
    const response = await t.request(TELEMETRY, signedInit(key, JSON.stringify(scanPayload()), NOW, { 'x-probe-token': apiToken }));
    await expectError(response, 401, 'ambiguous_auth');
    expect(await scanCount(t)).toBe(0);
  });

  test('a token with only a stray mode-2 header is ambiguous too', async () => {
    t = await makeTestApp();
    const { apiToken } = await t.leads.create('stray@example.com', true);
    await expectError(await t.request(TELEMETRY, tokenInit(apiToken, scanPayload(), { 'x-probe-timestamp': String(Date.now()) })), 401, 'ambiguous_auth');
  });
});
