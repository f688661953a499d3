import type { Database } from 'bun:sqlite';
import { createTableWriteStamp } from '../lib/table-writes.ts';

/**
 * What secrets (API keys, lead tokens) verified as, kept in memory by the secret's SHA-256 (never by
 * the secret itself; the same lookup the database's index makes) until `table` changes, by this
 * process or any other, such as the CLI revoking a key (lib/table-writes.ts), so the telemetry
 * batches committed every few milliseconds no longer send every secret back to the database. Only
 * secrets that verified are kept, so made-up ones add nothing, and at most `limit`, the oldest
 * dropped first. Inside an open transaction the cache is bypassed: what it reads may still roll back.
 */
export function createVerifiedCache<Value>(sqlite: Database, table: string, limit: number) {
  const tableStamp = createTableWriteStamp(sqlite, `${table}_writes`, [table]);
  const entries = new Map<string, Value>();
  let stamp = tableStamp();
  return {
    /** The value `hash` verified as, from memory while the table is unchanged, else from `verify` (null: refused, not kept). */
    get(hash: string, verify: () => Value | null): Value | null {
      // Inside a transaction the table may hold writes that still roll back (its counter with them).
      if (sqlite.inTransaction) return verify();
      const moved = tableStamp();
      if (moved !== stamp) {
        stamp = moved;
        entries.clear();
      }
      const known = entries.get(hash);
      if (known !== undefined) return known;
      const value = verify();
      if (value === null) return value;
      if (entries.size >= limit) entries.delete(entries.keys().next().value!);
      entries.set(hash, value);
      return value;
    },
  };
}
