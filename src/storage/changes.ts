/**
 * How caches in front of the storage learn that what they hold may be stale, without asking the
 * database on every read: each engine moves a stamp when a table may have changed, by this process
 * or another (the CLI, another instance). Reading a stamp is synchronous and cheap, so a cache hit
 * (a verified key on the telemetry path) never waits on the database.
 */
export interface ChangeFeed {
  /** A stamp that moves whenever any of `tables` may have changed. It may move without a change (a cache is then emptied early), never stay put across one. */
  tableStamp(tables: readonly string[]): () => string;
  /** A stamp that moves on any commit to the database. */
  anyChange(): () => number;
}
