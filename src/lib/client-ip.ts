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
