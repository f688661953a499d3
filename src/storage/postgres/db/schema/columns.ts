import { bigint, customType } from 'drizzle-orm/pg-core';

// The PostgreSQL counterparts of the SQLite schema's column kinds. The SQLite schema
// (src/storage/sqlite/db/schema/) is the reference: every table, column, key and index there has its twin here under
// the same names, so one set of queries can serve both engines (test/db-schema-parity.test.ts checks).

/**
 * An epoch-millisecond time, or a count or sequence value that grows with the data: `bigint` read
 * as a JS number (exact up to 2^53, as in SQLite's `integer`). `integer` is kept for values the code
 * bounds (bit sets, day numbers, positions, ranks, retry counts, the id of a one-row table).
 */
export function int8(name: string) {
  return bigint(name, { mode: 'number' });
}

/**
 * JSON kept as text (`text`, not `jsonb`), exactly as in SQLite's `text` JSON columns:
 * - the stored document is the one svc wrote (key order and duplicates kept): scans keep their JSON
 *   "as accepted" and products.raw the platform's payload, and `jsonb` would reorder their keys;
 * - `jsonb` refuses a `\u0000` escape, which JSON.stringify writes for a NUL inside any string an
 *   outside party sent, so a payload SQLite accepts would fail the insert;
 * - drizzle-orm 0.45's `json`/`jsonb` columns reach Bun's client already stringified and Bun encodes
 *   them a second time, storing a JSON string instead of the document (drizzle-orm#4942, fixed only
 *   in drizzle v1);
 * - no query reads inside these documents in SQL; one that must can cast (`column::jsonb`).
 * A default is SQL text (`.default(sql`'[]'`)`): drizzle-kit cannot write a JS value of a custom type.
 */
export const jsonText = customType<{ data: unknown; driverData: string }>({
  dataType: () => 'text',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value),
});

/** Bytes (`bytea`), as SQLite's `blob`: a rollup cell's hostname sketch. */
export const bytes = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
});
