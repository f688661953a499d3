import { afterEach, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../src/config.ts';
import { geoFromBytes, isPublicAddress, loadGeo } from '../src/geo/lookup.ts';
import { clientAddress } from '../src/lib/client-ip.ts';
import { makeTestApp, tempDir, testGeo, type TestApp } from './helpers/app.ts';
import { buildMmdb } from './helpers/mmdb.ts';
import { TELEMETRY, scanPayload, tokenInit } from './helpers/probe.ts';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe('GeoIP lookup (src/geo)', () => {
  test('reads the GeoLite2 record shape and the ip-location-db shape', () => {
    const geo = testGeo();
    expect(geo.country('81.2.69.160')).toBe('GB'); // { country: { iso_code } }
    expect(geo.country('8.8.8.8')).toBe('US'); // { country_code }
    expect(geo.country('2a02:8800::1')).toBe('DE');
  });

  test('an address outside every network has no country', () => {
    expect(testGeo().country('1.1.1.1')).toBeNull();
  });

  test('private, loopback, link-local and unspecified addresses give no country, even when the database maps them', () => {
    const geo = geoFromBytes(buildMmdb({ '10.0.0.0/8': { country_code: 'US' }, '127.0.0.0/8': { country_code: 'US' }, '192.168.0.0/16': { country_code: 'US' } }), 'test');
    for (const ip of ['10.1.2.3', '127.0.0.1', '192.168.1.1', '::1', 'fe80::1', 'fd00::1', '169.254.1.1', '0.0.0.0']) {
      expect(isPublicAddress(ip)).toBe(false);
      expect(geo.country(ip)).toBeNull();
    }
  });

  test('a code that is not ISO 3166-1 alpha-2 from the database is ignored', () => {
    expect(geoFromBytes(buildMmdb({ '8.8.8.0/24': { country_code: 'EU' } }), 'test').country('8.8.8.8')).toBeNull();
  });

  test('the default database is the embedded @ip-location-db country MMDB', async () => {
    const geo = await loadGeo(null);
    expect(geo.source).toContain('@ip-location-db/geo-whois-asn-country-mmdb');
    expect(geo.country('8.8.8.8')).toBe('US');
  });

  test('SVC_GEOIP_DB loads another MMDB file', async () => {
    const dir = tempDir();
    try {
      const file = path.join(dir.dir, 'country.mmdb');
      writeFileSync(file, buildMmdb({ '8.8.8.0/24': { country: { iso_code: 'JP' } } }));
      expect((await loadGeo(file)).country('8.8.8.8')).toBe('JP');
    } finally {
      dir.remove();
    }
  });

  test('SVC_GEOIP_DB naming a file that is not an MMDB stops the start with a ConfigError', async () => {
    const dir = tempDir();
    try {
      const file = path.join(dir.dir, 'junk.mmdb');
      writeFileSync(file, 'not a database');
      await expect(loadGeo(file)).rejects.toThrow(ConfigError);
    } finally {
      dir.remove();
    }
  });
});

describe('client address (SVC_TRUST_PROXY)', () => {
  const withXff = (value: string) => new Request('http://localhost/', { headers: { 'x-forwarded-for': value } });

  test('with no trusted hops X-Forwarded-For is ignored', () => {
    expect(clientAddress(withXff('8.8.8.8'), '127.0.0.1', 0)).toBe('127.0.0.1');
  });

  test('with one trusted hop the right-most X-Forwarded-For entry is the client', () => {
    expect(clientAddress(withXff('9.9.9.9, 8.8.8.8'), '127.0.0.1', 1)).toBe('8.8.8.8');
  });

  test('with two trusted hops the second entry from the right is the client', () => {
    expect(clientAddress(withXff('9.9.9.9, 8.8.8.8, 10.0.0.2'), '127.0.0.1', 2)).toBe('8.8.8.8');
  });

  test('fewer entries than hops gives the farthest entry; an invalid entry falls back to the peer', () => {
    expect(clientAddress(withXff('8.8.8.8'), '127.0.0.1', 3)).toBe('8.8.8.8');
    expect(clientAddress(withXff('not-an-ip'), '127.0.0.1', 1)).toBe('127.0.0.1');
  });

  test('an IPv4-mapped IPv6 peer is read as IPv4', () => {
    expect(clientAddress(withXff(''), '::ffff:81.2.69.160', 0)).toBe('81.2.69.160');
  });
});

describe('country of a scan', () => {
  /** The country of the app's one scan. */
  const countryOf = async () => ((await t.query('SELECT country FROM scans')) as { country: string | null }[]).map((row) => row.country);
  async function scanFrom(peer: string, env: Record<string, string>, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
    t = await makeTestApp({ env, peerAddress: () => peer });
    const { apiToken } = await t.leads.create('geo@example.com', true);
    expect((await t.request(TELEMETRY, tokenInit(apiToken, payload, headers))).status).toBe(204);
    const [country, ...more] = await countryOf();
    expect(more).toEqual([]);
    return country;
  }

  test('comes from GeoIP of the client address when the payload has none', async () => {
    expect(await scanFrom('81.2.69.160', {}, scanPayload())).toBe('GB');
  });

  test('an explicit valid country wins over GeoIP', async () => {
    expect(await scanFrom('81.2.69.160', {}, scanPayload({ country: 'JP' }))).toBe('JP');
  });

  test('an invalid explicit country falls back to GeoIP', async () => {
    expect(await scanFrom('81.2.69.160', {}, scanPayload({ country: 'Japan' }))).toBe('GB');
  });

  test('X-Forwarded-For is ignored without trusted hops', async () => {
    expect(await scanFrom('127.0.0.1', {}, scanPayload(), { 'x-forwarded-for': '81.2.69.160' })).toBeNull();
  });

  test('X-Forwarded-For gives the country behind one trusted proxy', async () => {
    expect(await scanFrom('127.0.0.1', { SVC_TRUST_PROXY: '1' }, scanPayload(), { 'x-forwarded-for': '2.125.160.216' })).toBe('FR');
  });

  test('a spoofed left-most X-Forwarded-For entry is not trusted', async () => {
    expect(await scanFrom('127.0.0.1', { SVC_TRUST_PROXY: '1' }, scanPayload(), { 'x-forwarded-for': '81.2.69.160, 2.125.160.216' })).toBe('FR');
  });

  test('a loopback client has no country', async () => {
    expect(await scanFrom('127.0.0.1', {}, scanPayload())).toBeNull();
  });

  test('every scan of a bulk request without a country gets the GeoIP country of the client; explicit ones win', async () => {
    t = await makeTestApp({ peerAddress: () => '81.2.69.160' });
    const { apiToken } = await t.leads.create('geo@example.com', true);
    const scans = [scanPayload({ url: 'https://shop.example.com/1' }), scanPayload({ url: 'https://shop.example.com/2', country: 'JP' }), scanPayload({ url: 'https://shop.example.com/3' })];
    const response = await t.request('/api/v1/probe/scan-bulk', tokenInit(apiToken, { scans }));
    expect(await response.json()).toMatchObject({ inserted: 3 });
    const countries = (await t.query('SELECT country FROM scans ORDER BY url')) as { country: string | null }[];
    expect(countries.map((row) => row.country)).toEqual(['GB', 'JP', 'GB']);
  });

  test('the client address is never stored', async () => {
    await scanFrom('81.2.69.160', {}, scanPayload());
    const row = (await t.query('SELECT * FROM scans'))[0];
    expect(JSON.stringify(row)).not.toContain('81.2.69.160');
  });
});
