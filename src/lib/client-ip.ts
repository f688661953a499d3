import { isIP } from 'node:net';

/** The address of the peer that opened the connection (the last proxy, if any), or null when unknown. */
export type PeerAddress = (request: Request) => string | null;

/** `::ffff:1.2.3.4` -> `1.2.3.4`, so IPv4 clients on a dual-stack socket key and geolocate as IPv4. */
function unmapped(ip: string): string {
  return ip.toLowerCase().startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/**
 * The client's address after `trustedHops` proxies (SVC_TRUST_PROXY). The peer is the first
 * trusted hop; each further hop is read from the right of X-Forwarded-For, so a client cannot
 * choose its address by sending its own header. With fewer entries than hops, the left-most
 * (farthest) valid entry is used. Used for rate limiting and GeoIP only; never stored.
 */
export function clientAddress(request: Request, peer: string | null, trustedHops: number): string | null {
  if (trustedHops > 0) {
    const forwarded = (request.headers.get('x-forwarded-for') ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    if (forwarded.length > 0) {
      const candidate = forwarded[Math.max(0, forwarded.length - trustedHops)]!;
      if (isIP(candidate)) return unmapped(candidate);
    }
  }
  return peer && isIP(peer) ? unmapped(peer) : null;
}

/** Scratch space for parsing one IPv6 address (reused: keying runs on every anonymous request). */
const parsed = new Uint16Array(8);
const groups = new Uint16Array(8);

/** Read an IPv6 address already validated by `isIP` into `groups`, in one pass over its text. */
function readIpv6(ip: string): void {
  const zone = ip.indexOf('%');
  const end = zone === -1 ? ip.length : zone;
  // A trailing dotted quad (`::ffff:1.2.3.4`, `64:ff9b::1.2.3.4`) is the last two groups.
  const lastColon = ip.lastIndexOf(':', end - 1);
  const dotted = ip.indexOf('.', lastColon) !== -1 && ip.indexOf('.', lastColon) < end;
  const stop = dotted ? lastColon + 1 : end;
  let count = 0;
  let gap = -1;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < stop; i++) {
    const c = ip.charCodeAt(i);
    if (c === 58 /* : */) {
      if (digits > 0) parsed[count++] = value;
      value = 0;
      digits = 0;
      if (ip.charCodeAt(i + 1) === 58) {
        gap = count;
        i++;
      }
    } else {
      value = value * 16 + (c <= 57 ? c - 48 : (c | 32) - 87);
      digits++;
    }
  }
  if (digits > 0) parsed[count++] = value;
  if (dotted) {
    let octets = 0;
    let octet = 0;
    for (let i = stop; i <= end; i++) {
      const c = i < end ? ip.charCodeAt(i) : 46;
      if (c === 46 /* . */) {
        octets = octets * 256 + octet;
        octet = 0;
      } else octet = octet * 10 + c - 48;
    }
    parsed[count++] = Math.floor(octets / 65536);
    parsed[count++] = octets % 65536;
  }
  groups.fill(0);
  if (gap === -1) groups.set(parsed.subarray(0, count));
  else {
    groups.set(parsed.subarray(0, gap));
    groups.set(parsed.subarray(gap, count), 8 - (count - gap));
  }
}

/**
 * The rate-limit identity of a client address, in time bounded by the address's length: an IPv4
 * address as is; an IPv6 address as its network of `ipv6PrefixBits` bits (`2001:db8:1:2::/64`), since
 * one subscriber usually holds a whole /64 and can rotate through it at will; an IPv4-mapped IPv6
 * address (`::ffff:1.2.3.4`, `::ffff:102:304`) as its IPv4 address.
 */
export function addressKey(ip: string, ipv6PrefixBits: number): string {
  if (ip.indexOf(':') === -1) return ip;
  readIpv6(ip);
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  const whole = ipv6PrefixBits >> 4;
  const partBits = ipv6PrefixBits & 15;
  let key = '';
  for (let g = 0; g < whole; g++) key += `${g === 0 ? '' : ':'}${groups[g]!.toString(16)}`;
  if (partBits > 0) key += `${whole === 0 ? '' : ':'}${(groups[whole]! & ((0xffff << (16 - partBits)) & 0xffff)).toString(16)}`;
  return `${key}${ipv6PrefixBits < 128 ? '::' : ''}/${ipv6PrefixBits}`;
}
