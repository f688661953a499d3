const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

/** An `allowedDomains` entry: an exact host, or `*.host` for its subdomains. Null if invalid. */
export function normalizeAllowedDomain(entry: string): string | null {
  const value = entry.trim().toLowerCase().replace(/\.$/, '');
  const host = value.startsWith('*.') ? value.slice(2) : value;
  const valid = host === 'localhost' || (HOSTNAME.test(host) && host.includes('.'));
  return valid ? value : null;
}
