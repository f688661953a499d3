import type { AppDatabase } from './db/index.ts';
import { fileBytes } from '../../lib/paths.ts';
import { jobCounts, type DatabaseHealth } from '../health.ts';

/** SQLite's health: a query and a one-row write on the open database, and the file sizes. */
export function sqliteDatabaseHealth(database: Pick<AppDatabase, 'sqlite' | 'file'>): DatabaseHealth {
  const ping = database.sqlite.prepare('SELECT 1 AS ok');
  const write = database.sqlite.prepare('INSERT INTO health_probe (id, written_at) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET written_at = ?1');
  const jobsByStatus = database.sqlite.query<{ status: string; n: number }, []>('SELECT status, count(*) AS n FROM jobs GROUP BY status');
  return {
    engine: 'sqlite',
    ping: async () => void ping.get(),
    probeWrite: async (now) => void write.run(now),
    figures: async () => ({ engine: 'sqlite', jobs: jobCounts(jobsByStatus.all()), databaseBytes: fileBytes(database.file), walBytes: fileBytes(`${database.file}-wal`) }),
  };
}
