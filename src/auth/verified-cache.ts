import type { Database } from 'bun:sqlite';
import { createChangeStamp } from '../lib/change-stamp.ts';

/**
 * What secrets (API keys, lead tokens) verified as, kept in memory by the secret's SHA-256 (never by
 * the secret itself; the same lookup the database's index makes) until the next commit to the
 * database by this process or any other, such as the CLI revoking a key, which the change stamp sees
 * before the next request (lib/change-stamp.ts). Only secrets that verified are kept, so made-up ones
 * add nothing, and at most `limit`, the oldest dropped first.
 */
export function createVerifiedCache<Value>(sqlite: Database, limit: number) {
  const changeStamp = createChangeStamp(sqlite);
  const entries = new Map<string, { stamp: number; value: Value }>();
  return {
    /** The value `hash` verified as, from memory while the database is unchanged, else from `verify` (null: refused, not kept). */
    get(hash: string, verify: () => Value | null): Value | null {
      const stamp = changeStamp();
      const known = entries.get(hash);
      if (known !== undefined && known.stamp === stamp) return known.value;
      entries.delete(hash);
      const value = verify();
      if (value === null) return null;
      if (entries.size >= limit) entries.delete(entries.keys().next().value!);
      entries.set(hash, { stamp, value });
      return value;
    },
  };
}
