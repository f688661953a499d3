import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { unlessAborted } from '../lib/abort.ts';
import { nonPublicRange } from '../lib/address-ranges.ts';

/** A store-supplied target svc will not connect to: its host is, or resolves to, an address outside the public internet. */
export class TargetRefused extends Error {
  override name = 'TargetRefused';
}

/** A host name's addresses, as the system resolver gives them (every one of them, IPv4 and IPv6). */
export type Resolve = (hostname: string) => Promise<string[]>;

export const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** `fetch` as svc calls it (Bun's: its `tls.serverName` is what pins a checked address, below). */
export type Fetch = (url: string, init: RequestInit & { tls?: { serverName?: string } }) => Promise<Response>;

/**
 * How svc reaches a platform's API. A target the operator configured (`SVC_PLATFORM_*_API_BASE`) is
 * trusted and fetched as it is. A target that comes from a store or a platform (platform C's site
 * URL, a platform-A shop domain) is checked first: its host and every address it resolves to must
 * be public internet addresses, unless the operator allowed private targets
 * (`SVC_ALLOW_PRIVATE_TARGETS=1`, for stores on svc's own network).
 */
export interface Egress {
  /** Throws TargetRefused when a store-supplied URL's host is, or resolves to, a non-public address. A host that does not resolve is not refused here (the call fails later, and says so). */
  check(url: string, signal?: AbortSignal): Promise<void>;
  fetch(url: string, init: RequestInit, operatorSet: boolean): Promise<Response>;
}

/** A request for `url` sent to `address` instead of whatever the host resolves to then: the Host header and the TLS server name (SNI and the certificate check) stay the URL's host. */
export function pinnedRequest(url: URL, address: string): { url: string; host: string; serverName: string | null } {
  const pinned = new URL(url.href);
  pinned.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return { url: pinned.href, host: url.host, serverName: url.protocol === 'https:' && isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0 ? url.hostname : null };
}

/** `localhost` and its subdomains are loopback whatever a resolver says (RFC 6761): never asked. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

export function createEgress(options: { allowPrivate: boolean; resolve?: Resolve; fetch?: Fetch }): Egress {
  const resolve = options.resolve ?? systemResolve;
  const send: Fetch = options.fetch ?? ((url, init) => fetch(url, init));

  /**
   * The addresses a store-supplied URL may be connected to: its literal address, or every address
   * its name resolves to, each checked. Null when the name does not resolve (the caller fails the call).
   */
  async function publicAddresses(url: URL, signal?: AbortSignal): Promise<string[] | null> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isLocalhostName(host)) throw new TargetRefused(`${host} is a loopback address`);
    if (isIP(host)) {
      const range = nonPublicRange(host);
      if (range) throw new TargetRefused(`${host} is ${range}`);
      return [host];
    }
    let addresses: string[];
    try {
      addresses = await unlessAborted(resolve(host), signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      return null;
    }
    if (addresses.length === 0) return null;
    // Every address must pass: the system may connect to any of them.
    for (const address of addresses) {
      const range = nonPublicRange(address);
      if (range) throw new TargetRefused(`${host} resolves to ${address}, ${range}`);
    }
    return addresses;
  }

  return {
    async check(url, signal) {
      if (!options.allowPrivate) await publicAddresses(new URL(url), signal);
    },

    /**
     * A store-supplied target is resolved, checked, and connected to at the address that was
     * checked (never resolved again by fetch), so a name that answers a public address to the check
     * and a private one a moment later (DNS rebinding) cannot reach the private one.
     */
    async fetch(url, init, operatorSet) {
      if (operatorSet || options.allowPrivate) return send(url, init);
      const target = new URL(url);
      const addresses = await publicAddresses(target, init.signal ?? undefined);
      if (!addresses) throw Object.assign(new Error(`${target.hostname} does not resolve`), { code: 'ENOTFOUND' });
      const pinned = pinnedRequest(target, addresses[0]!);
      const headers = new Headers(init.headers);
      headers.set('host', pinned.host);
      return send(pinned.url, { ...init, headers, ...(pinned.serverName ? { tls: { serverName: pinned.serverName } } : {}) });
    },
  };
}
