import { isHostname } from '../lib/hostname.ts';

/** An `allowedDomains` entry: an exact host, or `*.host` for its subdomains. Null if invalid. */
export function normalizeAllowedDomain(entry: string): string | null {
  const value = entry.trim().toLowerCase().replace(/\.$/, '');
  const host = value.startsWith('*.') ? value.slice(2) : value;
  return isHostname(host) ? value : null;
}
