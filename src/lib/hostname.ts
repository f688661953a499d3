const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

/** A lower-case DNS host name with at least one dot, or `localhost`. */
export function isHostname(host: string): boolean {
  return host === 'localhost' || (HOSTNAME.test(host) && host.includes('.'));
}

const SCAN_LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const SCAN_HOSTNAME = new RegExp(`^(?=.{1,253}$)${SCAN_LABEL}(?:\\.${SCAN_LABEL})*$`);

/**
 * The host a scanner reports (spec §2.1): lower-cased, one trailing dot dropped, labels may hold
 * `_` and a single label is allowed (intranet hosts); no scheme, path, port or whitespace. Null otherwise.
 */
export function normalizeHostname(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 253) return null;
  const lower = value.toLowerCase();
  const host = lower.endsWith('.') ? lower.slice(0, -1) : lower;
  return SCAN_HOSTNAME.test(host) ? host : null;
}
