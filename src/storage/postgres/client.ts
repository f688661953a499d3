import { SQL } from 'bun';
import { drizzle, type BunSQLDatabase, type BunSQLQueryResultHKT } from 'drizzle-orm/bun-sql';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import * as schema from './db/schema/index.ts';

/** Drizzle over Bun's PostgreSQL client, with svc's PostgreSQL schema. */
export type PostgresDb = BunSQLDatabase<typeof schema> & { $client: SQL };

/** What drizzle queries run on: the pool (each statement its own transaction) or an open transaction. */
export type PostgresQueries = PgDatabase<BunSQLQueryResultHKT, typeof schema>;

/**
 * Bun's client under drizzle queries: the pool, or the transaction or savepoint they run in
 * (drizzle's BunSQLSession keeps it as its public `client`). For plain SQL on the hot paths, where
 * drizzle's query building costs the request thread more than the statement.
 */
export const clientOf = (queries: PostgresQueries): SQL => (queries._.session as unknown as { client: SQL }).client;

/** An open PostgreSQL engine: `db` for drizzle queries, `sql` for Bun's tagged statements (batched hot paths). */
export interface PostgresClient {
  /** The database's URL (its password included): for a Worker's own connections (scan-roller-worker.ts). */
  url: string;
  sql: SQL;
  db: PostgresDb;
  /** The most connections the pool opens, and the name they carry on the server. */
  pool: { max: number; applicationName: string };
  close(): Promise<void>;
}

/**
 * A pool of at most `max` connections to the database at `url` (connections open on first use),
 * each named `applicationName` on the server (pg_stat_activity: which instance holds which connection).
 */
export function openPostgresClient(url: string, options: { max?: number; applicationName?: string } = {}): PostgresClient {
  const pool = { max: options.max ?? 10, applicationName: options.applicationName ?? 'svc' };
  const sql = new SQL({ url, max: pool.max, connection: { application_name: pool.applicationName } });
  const db = drizzle({ client: sql, schema }) as PostgresDb;
  return { url, sql, db, pool, close: () => sql.close() };
}
