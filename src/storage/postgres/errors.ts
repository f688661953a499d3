import { DrizzleQueryError } from 'drizzle-orm/errors';
import { EntryFailed } from '../../lib/group-commit.ts';

/**
 * A statement PostgreSQL refused, told without what it was given. drizzle's "Failed query" error
 * lists the statement's parameters (sealed credentials, a webhook secret, a platform's payload), and
 * the server's own DETAIL may quote the row ("Failing row contains (...)") or a key's value: neither
 * reaches a message, a log line or an answer. Only the server's primary message is kept (none for
 * a data exception, class 22, whose message may quote the value), with its SQLSTATE.
 */
export class PostgresStatementError extends Error {
  constructor(
    readonly operation: string,
    /** The SQLSTATE code (`23505`: a unique key taken), or null when the error did not come from the server. */
    readonly sqlState: string | null,
    what: string,
  ) {
    super(`${operation} failed: ${what}${sqlState ? ` (SQLSTATE ${sqlState})` : ''}`);
    this.name = 'PostgresStatementError';
  }
}

/** The server's error (Bun's PostgresError): its SQLSTATE is `errno`. */
function serverError(error: unknown): (Error & { errno: string }) | null {
  return error instanceof Error && error.name === 'PostgresError' && typeof (error as { errno?: unknown }).errno === 'string' ? (error as Error & { errno: string }) : null;
}

/** The SQLSTATE of a failed statement (as thrown by drizzle or Bun's client), or null. */
export const sqlStateOf = (error: unknown): string | null => serverError(error instanceof DrizzleQueryError ? error.cause : error)?.errno ?? null;

/** `error` as `operation` may throw it: a failed statement without its values; anything else (a bug, an EntryFailed's own error translated) as it is. */
export function withoutValues(operation: string, error: unknown): unknown {
  if (error instanceof EntryFailed) return new EntryFailed(error.index, withoutValues(operation, error.error));
  const cause = error instanceof DrizzleQueryError ? error.cause : error;
  const server = serverError(cause);
  if (server) return new PostgresStatementError(operation, server.errno, server.errno.startsWith('22') ? 'a value was refused by its column' : server.message);
  if (error instanceof DrizzleQueryError) return new PostgresStatementError(operation, null, cause instanceof Error ? cause.message : 'the statement failed');
  return error;
}

/** `records` with every method's failure told without the values it was given (withoutValues): what each PostgreSQL records object is wrapped in. */
export function valuesKeptOut<Records extends object>(domain: string, records: Records): Records {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(records)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await (method as (...args: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        throw withoutValues(`${domain}.${name}`, error);
      }
    };
  }
  return wrapped as Records;
}
