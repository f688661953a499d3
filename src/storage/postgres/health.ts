import { jobCounts, type DatabaseHealth } from '../health.ts';
import type { PostgresClient } from './client.ts';

/**
 * PostgreSQL's health: a query and a one-row write through the pool, and the pool as the server
 * sees it: this instance's connections are those named `pool.applicationName` (openPostgresClient).
 */
export function postgresDatabaseHealth(client: PostgresClient): DatabaseHealth {
  const { sql, pool } = client;
  return {
    engine: 'postgres',
    ping: async () => void (await sql`SELECT 1`),
    probeWrite: async (now) => void (await sql`INSERT INTO health_probe (id, written_at) VALUES (1, ${now}) ON CONFLICT (id) DO UPDATE SET written_at = EXCLUDED.written_at`),
    async figures() {
      // One after the other: run beside it, the jobs query would count as the instance's busy work.
      const jobs = await sql`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`;
      const [{ open, busy }] = await sql`SELECT count(*)::int AS open, (count(*) FILTER (WHERE state <> 'idle'))::int AS busy FROM pg_stat_activity WHERE application_name = ${pool.applicationName} AND datname = current_database()`;
      // This query's own connection is busy: it is not the instance's work.
      return { engine: 'postgres', jobs: jobCounts([...jobs]), pool: { max: pool.max, open, busy: Math.max(0, busy - 1) } };
    },
  };
}
