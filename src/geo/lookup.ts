import { BlockList, isIP } from 'node:net';
import { Reader, type Response as MmdbRecord } from 'mmdb-lib';
// The CC0 country database of @ip-location-db (DESIGN §2). With `type: 'file'` Bun resolves it to a
// path in node_modules during development and embeds the file in the compiled binary.
import defaultDatabasePath from '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb' with { type: 'file' };
import { ConfigError } from '../config.ts';
import { countryCode } from '../lib/country.ts';

/** Country of an IP address: ISO 3166-1 alpha-2, or null (unknown, private, loopback). */
export interface GeoLookup {
  country(ip: string): string | null;
  /** Where the database came from, for the startup log. */
  readonly source: string;
}

/** Both record shapes in use: GeoLite2/DB-IP (`country.iso_code`) and ip-location-db (`country_code`). */
interface CountryRecord {
  country?: { iso_code?: unknown };
  registered_country?: { iso_code?: unknown };
  country_code?: unknown;
}

/** Addresses that never belong to a country: RFC 1918, loopback, link-local, CGNAT, ULA, documentation, unspecified. */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.168.0.0', 16], ['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['2001:db8::', 32],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return false;
  return !NON_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** A lookup over an MMDB file's bytes; throws if they are not a MaxMind DB. */
export function geoFromBytes(bytes: Uint8Array, source: string): GeoLookup {
  const reader = new Reader<MmdbRecord>(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return {
    source,
    country(ip) {
      if (!isPublicAddress(ip)) return null;
      let record: CountryRecord | null;
      try {
        record = reader.get(ip) as CountryRecord | null;
      } catch {
        return null;
      }
      if (!record) return null;
      return countryCode(record.country?.iso_code) ?? countryCode(record.country_code) ?? countryCode(record.registered_country?.iso_code);
    },
  };
}

/** The database at `file` (SVC_GEOIP_DB), or the embedded default when null. */
export async function loadGeo(file: string | null): Promise<GeoLookup> {
  const path = file ?? defaultDatabasePath;
  const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
  try {
    return geoFromBytes(bytes, file ?? 'embedded @ip-location-db/geo-whois-asn-country-mmdb');
  } catch (error) {
    throw new ConfigError('SVC_GEOIP_DB', `${path} is not a MaxMind DB country database (${(error as Error).message})`);
  }
}
