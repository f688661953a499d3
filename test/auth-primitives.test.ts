import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { hmacSha256, safeEqual, sha256Hex } from '../src/lib/crypto.ts';
import { makeTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

describe('API keys', () => {
  test('a key is sk_live_ followed by 32 random bytes and differs every time', async () => {
    const a = (await t.keys.create({ scopes: ['admin'] })).key;
    const b = (await t.keys.create({ scopes: ['admin'] })).key;
    expect(a).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(8), 'base64url').length).toBe(32);
    expect(a).not.toBe(b);
  });

  test('only the SHA-256 of a key is stored', async () => {
    const { key } = await t.keys.create({ scopes: ['probe:scan'], name: 'ci' });
    const rows = await t.query('SELECT * FROM api_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).toBe(sha256Hex(key));
    expect(JSON.stringify(rows)).not.toContain(key.slice(8));
  });

  test('a key verifies; a wrong, malformed or revoked key does not', async () => {
    const { key, record } = await t.keys.create({ scopes: ['probe:scan'], allowedDomains: ['Shop.Example.com', '*.example.org'] });
    expect((await t.keys.verify(key))?.id).toBe(record.id);
    expect(record.allowedDomains).toEqual(['shop.example.com', '*.example.org']);
    const flipped = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    expect(await t.keys.verify(flipped)).toBeNull();
    expect(await t.keys.verify('sk_live_short')).toBeNull();
    expect(await t.keys.verify('')).toBeNull();
    await t.keys.revoke(record.id);
    expect(await t.keys.verify(key)).toBeNull();
  });

  test('scopes and allowed domains are validated', async () => {
    await expect(t.keys.create({ scopes: [] })).rejects.toThrow('scopes');
    await expect(t.keys.create({ scopes: ['root'] })).rejects.toThrow('unknown: root');
    await expect(t.keys.create({ scopes: ['products:read'], allowedDomains: ['https://x.com/'] })).rejects.toThrow('allowedDomains');
  });
});

describe('lead tokens', () => {
  test('a token is 32 random bytes and only its hash is stored', async () => {
    const { lead, apiToken } = await t.leads.create('Someone@Example.com');
    expect(Buffer.from(apiToken, 'base64url').length).toBe(32);
    expect(lead.email).toBe('someone@example.com');
    expect(lead.verified).toBe(false);
    const row = (await t.query('SELECT * FROM leads'))[0]!;
    expect(row.token_hash).toBe(sha256Hex(apiToken));
    expect(JSON.stringify(row)).not.toContain(apiToken);
  });

  test('rotation invalidates the old token at once', async () => {
    const { lead, apiToken } = await t.leads.create('a@example.com');
    const next = (await t.leads.rotate(lead.id))!;
    expect(await t.leads.findByToken(apiToken)).toBeNull();
    expect((await t.leads.findByToken(next))?.id).toBe(lead.id);
  });

  test('a revoked token no longer authenticates', async () => {
    const { lead, apiToken } = await t.leads.create('a@example.com');
    await t.leads.revoke(lead.id);
    expect(await t.leads.findByToken(apiToken)).toBeNull();
  });
});

describe('constant-time comparison', () => {
  test('safeEqual compares content, including different lengths and unicode', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('é', 'e\u0301')).toBe(false);
  });
});

describe('HMAC', () => {
  test('an HMAC over parts equals the HMAC over their concatenation (RFC 4231 test case 2)', () => {
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    expect(hmacSha256('Jefe', 'what do ya want for nothing?', 'hex')).toBe(expected);
    expect(hmacSha256('Jefe', ['what do ya ', new TextEncoder().encode('want for nothing?')], 'hex')).toBe(expected);
  });
});
