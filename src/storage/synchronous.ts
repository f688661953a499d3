/**
 * A records interface answered without a promise: what the SQLite engine's records are underneath
 * (bun:sqlite answers synchronously). Only code that has not moved behind the seam yet uses this
 * form, where it must stay synchronous: writes inside its own SQLite transaction (the webhook group
 * commit, the catalogue sync's batches, a removal's confirmation), and the hot public GETs, which
 * answer without a promise (test/hot-paths.test.ts). Everything else takes the records themselves.
 */
export type Synchronous<Records> = {
  [Name in keyof Records]: Records[Name] extends (...args: infer Args) => Promise<infer Result> ? (...args: Args) => Result : Records[Name];
};
