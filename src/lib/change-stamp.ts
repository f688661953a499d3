import type { Database } from 'bun:sqlite';

/**
 * A cheap stamp that changes whenever the database may have changed: rows written through this
 * connection (`total_changes()`) plus commits by any other connection (`data_version`, e.g. the CLI
 * revoking a key). Caches keep an entry while the stamp is unchanged and revalidate it otherwise;
 * any write at all moves it, so it can only over-invalidate, never serve stale data.
 */
export function createChangeStamp(sqlite: Database): () => string {
  const query = sqlite.query<{ c: number; v: number }, []>('SELECT total_changes() AS c, (SELECT data_version FROM pragma_data_version) AS v');
  return () => {
    const row = query.get()!;
    return `${row.c}:${row.v}`;
  };
}
