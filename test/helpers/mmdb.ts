/**
 * A minimal MaxMind DB (MMDB v2) writer for test fixtures, written for this project from the
 * published format specification (https://maxmind.github.io/MaxMind-DB/): an IPv6 search tree
 * with 24-bit records (IPv4 networks live under ::/96), a data section holding maps and UTF-8
 * strings, and the metadata map. It builds a database of a few hundred bytes, so tests need no
 * downloaded file and the mapping from address to country is visible in the test itself.
 */
import { isIP } from 'node:net';

type Value = string | number | bigint | Value[] | { [key: string]: Value };

function control(type: number, size: number): number[] {
  // Types above 7 are "extended": type bits 0 in the control byte, then a byte holding type - 7.
  const bytes = type <= 7 ? [type << 5] : [0, type - 7];
  if (size < 29) bytes[0]! |= size;
  else if (size < 285) (bytes[0]! |= 29), bytes.push(size - 29);
  else if (size < 65_821) (bytes[0]! |= 30), bytes.push((size - 285) >> 8, (size - 285) & 0xff);
  else throw new Error('fixture value too large');
  return bytes;
}

function uintBytes(value: bigint): number[] {
  const out: number[] = [];
  for (let v = value; v > 0n; v >>= 8n) out.unshift(Number(v & 0xffn));
  return out;
}

function encode(value: Value): number[] {
  if (typeof value === 'string') {
    const bytes = [...new TextEncoder().encode(value)];
    return [...control(2, bytes.length), ...bytes];
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    const bytes = uintBytes(BigInt(value));
    const type = typeof value === 'bigint' ? 9 : value <= 0xffff ? 5 : 6;
    return [...control(type, bytes.length), ...bytes];
  }
  if (Array.isArray(value)) return [...control(11, value.length), ...value.flatMap(encode)];
  const entries = Object.entries(value);
  return [...control(7, entries.length), ...entries.flatMap(([k, v]) => [...encode(k), ...encode(v)])];
}

/** The 128 bits of an address; IPv4 as ::a.b.c.d, the way MMDB IPv6 trees hold IPv4. */
function addressBits(ip: string): number[] {
  const bits: number[] = [];
  if (isIP(ip) === 4) {
    bits.push(...new Array(96).fill(0));
    for (const octet of ip.split('.').map(Number)) for (let i = 7; i >= 0; i--) bits.push((octet >> i) & 1);
    return bits;
  }
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...new Array(8 - left.length - right.length).fill('0'), ...right] : left;
  for (const group of groups) for (let i = 15; i >= 0; i--) bits.push((parseInt(group, 16) >> i) & 1);
  return bits;
}

type Rec = { kind: 'empty' } | { kind: 'node'; index: number } | { kind: 'data'; offset: number };

/**
 * An MMDB mapping each CIDR network (`'81.2.69.0/24'`, `'2a02:8800::/32'`) to its record, for
 * example `{ country: { iso_code: 'GB' } }` (GeoLite2 shape) or `{ country_code: 'GB' }`.
 */
export function buildMmdb(networks: Record<string, Value>): Uint8Array {
  const nodes: [Rec, Rec][] = [[{ kind: 'empty' }, { kind: 'empty' }]];
  const data: number[] = [];
  for (const [cidr, record] of Object.entries(networks)) {
    const [ip, lengthText] = cidr.split('/');
    const bits = addressBits(ip!);
    const prefix = (isIP(ip!) === 4 ? 96 : 0) + Number(lengthText);
    const offset = data.length;
    data.push(...encode(record));
    let node = 0;
    for (let depth = 0; depth < prefix - 1; depth++) {
      const bit = bits[depth]!;
      const next = nodes[node]![bit]!;
      if (next.kind === 'node') {
        node = next.index;
        continue;
      }
      nodes.push([next, next]);
      nodes[node]![bit] = { kind: 'node', index: nodes.length - 1 };
      node = nodes.length - 1;
    }
    nodes[node]![bits[prefix - 1]!] = { kind: 'data', offset };
  }

  const nodeCount = nodes.length;
  const value = (rec: Rec) => (rec.kind === 'empty' ? nodeCount : rec.kind === 'node' ? rec.index : nodeCount + 16 + rec.offset);
  const tree = nodes.flatMap(([l, r]) => [value(l), value(r)].flatMap((v) => [(v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff]));
  const metadata = encode({
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000n,
    database_type: 'svc-test-country',
    description: { en: 'svc test fixture built by test/helpers/mmdb.ts' },
    ip_version: 6,
    languages: ['en'],
    node_count: nodeCount,
    record_size: 24,
  });
  const marker = [0xab, 0xcd, 0xef, ...new TextEncoder().encode('MaxMind.com')];
  return new Uint8Array([...tree, ...new Array(16).fill(0), ...data, ...marker, ...metadata]);
}
