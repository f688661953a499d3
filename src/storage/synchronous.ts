import type { MaybePromise } from '../lib/maybe-promise.ts';

/**
 * A records interface answered without a promise: what the SQLite engine's records are underneath
 * (bun:sqlite answers synchronously). Each engine's atomic methods run their transactions inside;
 * the SQLite engine builds them from these (a nested write is a savepoint of the method's
 * transaction). Outside the engine, only code that must stay synchronous and has not moved yet uses
 * this form: the hot public GETs, which answer without a promise (test/hot-paths.test.ts), and key
 * creation's check of the store it binds. Everything else takes the records themselves.
 */
export type Synchronous<Records> = {
  [Name in keyof Records]: Records[Name] extends (...args: infer Args) => Promise<infer Result> ? (...args: Args) => Result : Records[Name];
};

/**
 * A records interface answered at once where the engine can (SQLite's `Synchronous` records fit it)
 * and with a promise where it cannot (PostgreSQL's records fit it too): for the hot public GETs,
 * which go on without a promise whenever they got a value (`andThen`, src/lib/maybe-promise.ts).
 */
export type Immediate<Records> = {
  [Name in keyof Records]: Records[Name] extends (...args: infer Args) => Promise<infer Result> ? (...args: Args) => MaybePromise<Result> : Records[Name];
};
