import type { Synchronous } from '../synchronous.ts';

/**
 * SQLite's synchronous records as the seam's records: each method answers with a promise, a throw
 * as a rejection. The work itself still happens within the call (bun:sqlite is synchronous), so a
 * write is committed when the method returns, as before the seam.
 */
export function promised<Records extends object>(records: Synchronous<Records>): Records {
  const answered: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(records)) {
    answered[name] = async (...args: unknown[]) => (method as (...args: unknown[]) => unknown)(...args);
  }
  return answered as Records;
}
