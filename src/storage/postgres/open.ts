import { migratePostgres } from './db/migrate.ts';
import { urlShown } from '../../lib/url-credentials.ts';
import type { Storage } from '../index.ts';
import { openPostgresClient } from './client.ts';
import { postgresStorage } from './index.ts';
import { reachPostgres } from './reach.ts';

/** svc's state in PostgreSQL, open and migrated. */
export interface OpenedPostgres {
  storage: Storage;
  /** The URL without its credentials, as the start line and logs name it. */
  shown: string;
  migrations: { applied: number; total: number };
  close(): Promise<void>;
}

/**
 * Opens svc's PostgreSQL database: reaches it first (a URL that cannot be reached or logged into is
 * a DatabaseUnreachableError of one line, without the password), migrates it under the advisory lock
 * (several instances starting at once migrate once), then opens the pool of at most `poolMax`
 * connections, each named `applicationName` on the server, and its change feed.
 */
export async function openPostgres(settings: { url: string; poolMax: number }, applicationName: string): Promise<OpenedPostgres> {
  await reachPostgres(settings.url);
  const migrations = await migratePostgres(settings.url);
  const client = openPostgresClient(settings.url, { max: settings.poolMax, applicationName });
  const storage = postgresStorage(client);
  try {
    await storage.changes.ready;
  } catch (error) {
    await client.close();
    throw error;
  }
  return {
    storage,
    shown: urlShown(settings.url),
    migrations,
    close: async () => {
      await storage.changes.close();
      await client.close();
    },
  };
}
