import type { ChangeFeed } from '../changes.ts';
import type { PostgresClient } from './client.ts';

/** The channel every svc table's trigger notifies with its name (drizzle-pg/0001_change_feed.sql). */
export const CHANGE_CHANNEL = 'svc_changes';

/** How often the feed notifies itself, to know it still hears the channel. */
const HEARTBEAT_MS = 250;
/** Heard nothing for this long (not even its own heartbeat): the feed may be missing changes. */
const DEAF_AFTER_MS = 1000;

export interface PostgresChangeFeed extends ChangeFeed {
  /** Resolves once the feed listens: a stamp read before may miss a change. */
  ready: Promise<void>;
  /**
   * Moves the stamps of `tables` at once: this process's own commits, whose notification arrives a
   * few ms after the write's answer (a key revoked here is refused by the next request here).
   */
  wrote(tables: readonly string[]): void;
  close(): Promise<void>;
}

/**
 * PostgreSQL's change feed: a LISTEN on CHANGE_CHANNEL, which the tables' triggers notify at each
 * commit that wrote them, by any process (another instance, the CLI, psql). Each table's stamp
 * counts its notifications. Notifications sent while the listening connection was down are lost,
 * so every stamp also holds an epoch that moves whenever the feed (re)subscribes, and while the
 * feed has heard nothing for DEAF_AFTER_MS (its own heartbeat included) every read of a stamp moves
 * it: caches in front of the records then ask storage each time instead of serving what may be stale.
 */
export function postgresChangeFeed(client: PostgresClient): PostgresChangeFeed {
  const counts = new Map<string, number>();
  let epoch = 0;
  let any = 0;
  let deafReads = 0;
  let heardAt = performance.now();
  const bump = (table: string) => {
    counts.set(table, (counts.get(table) ?? 0) + 1);
    any++;
  };
  const subscription = client.sql.listen(
    CHANGE_CHANNEL,
    (table) => {
      heardAt = performance.now();
      // The heartbeat's payload is empty: it says the feed hears, not that anything changed.
      if (table !== '') bump(table);
    },
    () => {
      heardAt = performance.now();
      epoch++;
      any++;
    },
  );
  const heartbeat = setInterval(() => void client.sql.notify(CHANGE_CHANNEL, '').catch(() => {}), HEARTBEAT_MS);
  heartbeat.unref();
  const deaf = () => performance.now() - heardAt > DEAF_AFTER_MS;

  return {
    ready: subscription.then(() => undefined),
    tableStamp(tables) {
      const named = [...tables];
      let sum = -1;
      let seenEpoch = -1;
      let stamp = '';
      return () => {
        if (deaf()) return `deaf:${++deafReads}`;
        let now = 0;
        for (const table of named) now += counts.get(table) ?? 0;
        if (now !== sum || epoch !== seenEpoch) {
          [sum, seenEpoch] = [now, epoch];
          stamp = `${epoch}:${now}`;
        }
        return stamp;
      };
    },
    anyChange: () => () => (deaf() ? -++deafReads : any),
    wrote(tables) {
      for (const table of tables) bump(table);
    },
    async close() {
      clearInterval(heartbeat);
      await (await subscription.catch(() => null))?.unlisten();
    },
  };
}
