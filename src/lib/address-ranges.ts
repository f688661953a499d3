import { isIP } from 'node:net';

/**
 * Addresses outside the public internet: what svc refuses to connect to for a target that a store
 * or a platform named (platforms/egress.ts), unless the operator allows private targets. Each range
 * is named for the error message; the more specific ranges (metadata services) come before the
 * ranges that hold them.
 */
const IPV4_RANGES: [string, number, string][] = [
  ['169.254.169.254', 32, 'a cloud metadata address'],
  ['169.254.170.2', 32, 'a cloud metadata address'],
  ['100.100.100.200', 32, 'a cloud metadata address'],
  ['192.0.0.192', 32, 'a cloud metadata address'],
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a reserved address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];

const IPV6_RANGES: [string, number, string][] = [
  ['fd00:ec2::254', 128, 'a cloud metadata address'],
  ['::', 128, 'the unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['fc00::', 7, 'a unique-local address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
  ['64:ff9b:1::', 48, 'a local-use NAT64 address'],
  ['100::', 64, 'a discard address'],
  ['2001::', 23, 'an IETF protocol address (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::', 32, 'a documentation address'],
  ['3fff::', 20, 'a documentation address'],
];

/** The 128 bits of an IPv6 address (zone id dropped, a trailing dotted quad read as the last 32 bits). */
function ipv6Bits(ip: string): bigint {
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const [a, b, c, d] = text.slice(lastColon + 1).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groupsOf = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groupsOf(head);
  const right = groupsOf(tail);
  const groups = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(group), 0n);
}

const ipv4Bits = (ip: string): bigint => ip.split('.').reduce((bits, octet) => (bits << 8n) | BigInt(Number(octet)), 0n);

const within = (bits: bigint, net: bigint, prefix: number, width: number): boolean => bits >> BigInt(width - prefix) === net >> BigInt(width - prefix);

const V4 = IPV4_RANGES.map(([net, prefix, name]) => [ipv4Bits(net), prefix, name] as const);
const V6 = IPV6_RANGES.map(([net, prefix, name]) => [ipv6Bits(net), prefix, name] as const);

/**
 * The IPv4 address an IPv6 address stands for, where it names one: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-compatible (`::a.b.c.d`, deprecated), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64
 * (`64:ff9b::a.b.c.d`, which a NAT64 gateway connects to) and 6to4 (`2002:AABB:CCDD::`).
 */
function embeddedIpv4(bits: bigint): bigint | null {
  const low32 = bits & 0xffffffffn;
  const high96 = bits >> 32n;
  if (high96 === 0xffffn || high96 === 0xffff0000n || high96 === 0x64ff9b0000000000000000n) return low32;
  // `::a.b.c.d`, but not `::` and `::1`, which are ranges of their own.
  if (high96 === 0n && low32 > 1n) return low32;
  if (bits >> 112n === 0x2002n) return (bits >> 80n) & 0xffffffffn;
  return null;
}

function ipv4Range(bits: bigint): string | null {
  for (const [net, prefix, name] of V4) if (within(bits, net, prefix, 32)) return name;
  return null;
}

/**
 * Why `ip` is not a public internet address ("a loopback address", "a private address", "a cloud
 * metadata address" ...), or null when it is one. An IPv6 address that stands for an IPv4 address is
 * judged by that address; any other IPv6 address outside global unicast (2000::/3) is reserved.
 * Text that is not an IP address is reported as such.
 */
export function nonPublicRange(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) return ipv4Range(ipv4Bits(ip));
  if (family !== 6) return 'not an IP address';
  const bits = ipv6Bits(ip);
  const ipv4 = embeddedIpv4(bits);
  if (ipv4 !== null) return ipv4Range(ipv4);
  for (const [net, prefix, name] of V6) if (within(bits, net, prefix, 128)) return name;
  return bits >> 125n === 1n ? null : 'a reserved address';
}
