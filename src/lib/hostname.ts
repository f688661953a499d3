const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);

/** A lower-case DNS host name with at least one dot, or `localhost`. */
export function isHostname(host: string): boolean {
  return host === 'localhost' || (HOSTNAME.test(host) && host.includes('.'));
}
