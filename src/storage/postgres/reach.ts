import { SQL } from 'bun';
import { passwordScrubber, urlShown } from '../../lib/url-credentials.ts';

/** How long reaching PostgreSQL at start may take before the start gives up. */
export const CONNECT_TIMEOUT_SECONDS = 10;

/**
 * PostgreSQL at the configured URL cannot be used: not reachable, the login refused, or the database
 * missing. The message names the URL without its credentials and says why, on one line; it never
 * carries the password.
 */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

/** What a failed first contact means, in the operator's words: the client's code, else PostgreSQL's own message (which never holds the password). */
function reason(error: unknown, scrub: (error: unknown) => string): string {
  const { code, errno } = error as { code?: string; errno?: string };
  if (code === 'ERR_POSTGRES_CONNECTION_REFUSED') return 'the connection was refused, or the host name does not resolve';
  if (code === 'ERR_POSTGRES_CONNECTION_TIMEOUT') return `no answer within ${CONNECT_TIMEOUT_SECONDS} s`;
  // PostgreSQL's SQLSTATE, where the server answered: 28P01/28000 the login, 3D000 the database.
  if (errno === '28P01' || errno === '28000') return `the login was refused: ${scrub(error)}`;
  if (errno === '3D000') return `${scrub(error)} (create it first: see docs/scaling.md)`;
  return scrub(error).replace(/\s+/g, ' ');
}

/**
 * Checks that PostgreSQL at `url` takes a login and answers a query, on a connection of its own;
 * throws a DatabaseUnreachableError otherwise. Returns the server's major version.
 */
export async function reachPostgres(url: string): Promise<number> {
  const sql = new SQL({ url, max: 1, connectionTimeout: CONNECT_TIMEOUT_SECONDS });
  try {
    const [row] = await sql`SELECT current_setting('server_version_num')::int AS version`;
    return Math.floor((row.version as number) / 10_000);
  } catch (error) {
    throw new DatabaseUnreachableError(`cannot use PostgreSQL at ${urlShown(url)}: ${reason(error, passwordScrubber(url))}`);
  } finally {
    await sql.close().catch(() => {});
  }
}
