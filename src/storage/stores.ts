// What the stores, the catalogue sync, the job queue and the webhook deliveries keep in storage, in
// their own value types: one implementation per engine (src/storage/sqlite/{stores,sync,jobs,
// deliveries}.ts, src/storage/postgres/ likewise), held to the same contract by
// test/storage/stores-records.test.ts. Every operation that must be atomic is one method, whose
// transaction the engine runs (a 200 or 204 means it committed); all times are epoch milliseconds.
import type { CatalogEntry } from '../catalog/entries.ts';
import type { CatalogEntryType } from '../catalog/entry-data.ts';
import type { PreparedProduct, RemoveOutcome } from '../catalog/products.ts';
import type { UnlistedChunk } from '../catalog/sweep.ts';
import type { GroupSlice } from '../lib/group-commit.ts';
import type { RefusalReason } from '../platforms/types.ts';
import type { HookChanges, SavedCredentials, StoreRecord } from '../stores/registry.ts';
import type { StoreHoldings } from '../stores/removal.ts';
import type { StoreSettings } from '../stores/settings.ts';
import type { Platform } from '../stores/types.ts';
import type { PassRef, SyncPass } from '../sync/state.ts';
import type { SyncKind, SyncTrigger } from '../sync/types.ts';
import type { DeliveryToCommit, Outcome, Settled } from '../webhooks/deliveries.ts';
import type { Job, NewJob, RequeueAttempts } from '../webhooks/queue.ts';

/**
 * Connected stores (`stores`, with their lifecycle events in `store_events`). Credentials and the
 * webhook secret arrive sealed (lib/secrets.ts) and are stored so; no engine puts a value it was
 * given in an error it throws.
 */
export interface StoreRecords {
  byId(id: string): Promise<StoreRecord | null>;
  /** The store of `platform` that deliveries name by `platformRef` (shop domain, store hash, site URL), or null. */
  byRef(platform: Platform, platformRef: string): Promise<StoreRecord | null>;
  /** Every store, oldest first (creation time, then id). */
  list(): Promise<StoreRecord[]>;
  /**
   * Stores the new store, and in the same transaction `connection` (the job that connects it), so
   * no one sees the store without it; null (nothing stored) when another store of its platform has
   * its reference.
   */
  add(store: StoreRecord, connection?: NewJob): Promise<StoreRecord | null>;
  /**
   * New credentials saved as the store's, with what comes with them: hooks to register again (no
   * error, no topics), active and reconnected (no deactivation, withdrawal or disconnection), the
   * currency when one is given, updated at `at`. `'ref_taken'` (nothing written) when another store
   * of its platform has `platformRef`; null when there is no such store. `connection` (the job that
   * connects it again) is stored in the same transaction.
   */
  saveCredentials(id: string, saved: SavedCredentials, at: number, connection?: NewJob): Promise<StoreRecord | 'ref_taken' | null>;
  /** Every store's sealed values that are not stored plain (`plain:`): what must open with this svc's key. */
  sealedValues(): Promise<Pick<StoreRecord, 'id' | 'credentials' | 'webhookSecret'>[]>;
  /**
   * Platform C's window for the store's unsigned creation ping: open from `openedAt` until (not at)
   * `closesAt`, in place of any window the store had; nothing for an unknown store.
   */
  openPingWindow(id: string, openedAt: number, closesAt: number): Promise<void>;
  /** The creation ping arrived at `at`: the store's hooks confirmed at `at` (true) only while its window is open then; false, nothing written, otherwise. */
  confirmPing(id: string, at: number): Promise<boolean>;
  /** The store's hooks as given; its update time moves to `at` (null: it stays). The store as it now is, or null. */
  setHooks(id: string, hooks: HookChanges, at: number | null): Promise<StoreRecord | null>;
  setCurrency(id: string, currency: string, at: number): Promise<StoreRecord | null>;
  /** Replaces the settings; the update time moves to `at`, or 1 ms past the previous one when that is not earlier (it is part of the signals' version stamp). */
  saveSettings(id: string, settings: StoreSettings, at: number): Promise<StoreRecord | null>;
  /**
   * The operator disconnects the store: inactive, disconnected and its signals withdrawn (each time
   * kept from the first disconnect), the update time moved as saveSettings moves it, and each of
   * `disconnected`, `signals_withdrawn` recorded as a store event the first time only.
   */
  disconnect(id: string, at: number): Promise<StoreRecord | null>;
  /** `app/uninstalled`: inactive, its signals withdrawn, both recorded as store events (`app_uninstalled`, `signals_withdrawn`). */
  deactivate(id: string, at: number): Promise<void>;
  /**
   * The start of a removal or disconnect, in one transaction: the store disconnected (as
   * `disconnect`), its running sync passes ended as failed with `reason` (not counted as failed
   * passes), its unfinished jobs (queued or running) deleted. The store as it was before, and how
   * many jobs were dropped; null (nothing written) when there is no such store.
   */
  stop(id: string, reason: string, at: number): Promise<{ store: StoreRecord; dropped: number } | null>;
  /** What svc holds for the store (all zero for an unknown one). */
  holdings(id: string): Promise<StoreHoldings>;
  /** Every row that names the store, and the store, deleted in one transaction; what was deleted. */
  removeAll(id: string): Promise<StoreHoldings>;
  /** The end of a disconnect, in one transaction: the hooks as given (null: unchanged), the unfinished jobs dropped; what is kept, and how many jobs were dropped. */
  finishDisconnect(id: string, hooks: HookChanges | null, at: number): Promise<{ kept: StoreHoldings; dropped: number }>;
}

/** A pass to begin: `failed` ends it at once as failed with that reason; else `job` (a job kind) is queued for it, once (JobRecords.enqueueOnce). */
export interface PassToBegin {
  kind: SyncKind;
  runId: string;
  failed: string | null;
  job: string | null;
}

/** A page's items as a pass writes them (inside its batch's transaction). */
export type PageWrite =
  /** Products through the catalogue's ordering rule (ProductRecords.upsert), then marked listed by the pass. */
  | { kind: 'products'; currency: string | null; products: PreparedProduct[] }
  /** Categories or pages, each row replacing the stored one (CatalogEntryRecords.upsert). */
  | { kind: 'entries'; entries: CatalogEntry[] };

/** Where a pass goes on after its page: the next page's position (null: the sweep begins), the items it read, and the ids it spanned (`low:high`). */
export interface PageAdvance {
  next: string | null;
  items: number;
  pageSpan: string | null;
}

/** What a pass of a kind sweeps: the store's products (removed as confirmed gone), or its categories or pages (deleted). */
export type SweepTarget = { kind: 'products' } | { kind: 'entries'; type: CatalogEntryType };

/**
 * Catalogue sync passes (`catalog_syncs`, one per store and kind), with the writes each step makes
 * in the same transaction as its bookkeeping: a method given a pass (`PassRef`) writes nothing and
 * answers false or null once that pass is no longer the running one of its kind (a newer trigger
 * superseded it, or the operator stopped it).
 */
export interface SyncStateRecords {
  get(storeId: string, kind: SyncKind): Promise<SyncPass | null>;
  /** The latest pass of each kind the store has had. */
  of(storeId: string): Promise<SyncPass[]>;
  /** Whether any pass of the store is running. */
  running(storeId: string): Promise<boolean>;
  /** New passes from their first page started at `at` (each supersedes a running one of its kind), in one transaction. */
  begin(storeId: string, trigger: SyncTrigger, passes: PassToBegin[], at: number): Promise<void>;
  /** The last error of a page being retried (the pass goes on). */
  noteError(pass: PassRef, error: string): Promise<void>;
  /** The pass gave up at `at`: one more failed pass in a row. */
  fail(pass: PassRef, error: string, at: number): Promise<void>;
  /** The store's sync paused (the first pause's time kept) and its unfinished jobs of `jobKinds` dropped, in one transaction; null for an unknown store. */
  pause(storeId: string, jobKinds: readonly string[], at: number): Promise<StoreRecord | null>;
  /** The store's sync resumed and, for each pass still running, its kind's job (`jobKinds`) queued once, in one transaction; null for an unknown store. */
  resume(storeId: string, jobKinds: Record<SyncKind, string>, at: number): Promise<StoreRecord | null>;
  /**
   * A batch of a page's items written at `at` (products listed by the pass), and with `advance`
   * (the page's last batch) the pass moved on past the page, in one transaction; false (nothing
   * written) when the pass is no longer running.
   */
  applyPage(pass: PassRef, passStartedAt: number, write: PageWrite, advance: PageAdvance | null, at: number): Promise<boolean>;
  /**
   * A step of the sweep after the pass's last page: the next `limit` items after `after`, and those
   * the pass did not list. With `removeUnlisted`, those are removed (as of `at`) and the sweep's
   * position saved in the same transaction; without it, nothing is written when some are unlisted
   * (each is to be confirmed first), and a chunk with none is swept through as with it. Null
   * (nothing written) when the pass is no longer running.
   */
  sweepStep(pass: PassRef, passStartedAt: number, target: SweepTarget, after: string, limit: number, removeUnlisted: boolean, at: number): Promise<UnlistedChunk | null>;
  /** `gone` removed (as of `at`) and the sweep's position saved (`through` null: the pass completed at `at`), in one transaction; false when the pass is no longer running. */
  sweptThrough(pass: PassRef, target: SweepTarget, gone: string[], through: string | null, at: number): Promise<boolean>;
}

/**
 * Durable background jobs (`jobs`). A job is `queued` until claimed, `running` while leased to a
 * runner (taken again once its lease ends: a crash), then `done`, or `dead` once given up.
 */
export interface JobRecords {
  enqueue(job: NewJob): Promise<Job>;
  /**
   * At most one unfinished job of a kind per store, whatever runs at the same time: a queued one is
   * made due by `job.runAt` at the latest, a running one is left as it is; else `job` is stored.
   */
  enqueueOnce(job: NewJob): Promise<Job>;
  /**
   * Takes the next due job, queued with `runAt <= now` or running with `leaseUntil <= now`, in
   * (runAt, id) order, a job of another store than `otherThan` first: running, its attempt counted,
   * leased until `leaseUntil`. Two claims at the same time never take the same job.
   */
  claim(now: number, leaseUntil: number, otherThan: string | null): Promise<Job | null>;
  /** Queued again, due at `runAt`, unleased and without an error; its attempts as `attempts` says. */
  requeue(id: string, runAt: number, attempts: RequeueAttempts): Promise<void>;
  /** Every running job's lease ends at `at` (a start after a process that left them running). */
  releaseLeases(at: number): Promise<void>;
  /**
   * The heartbeat of a run: the lease it holds until `heldUntil` is extended to `leaseUntil`. False
   * (nothing written) when the job is no longer that run's: finished, dropped, or taken again by
   * another runner once the lease had ended.
   */
  renewLease(id: string, heldUntil: number, leaseUntil: number): Promise<boolean>;
  /** A run stopped by its runner's shutdown gives its lease (held until `heldUntil`) back: it ends at `at`, so another runner takes the job at once. Nothing when the lease is no longer the run's. */
  handBack(id: string, heldUntil: number, at: number): Promise<void>;
  complete(id: string, at: number): Promise<void>;
  /** A failed attempt: queued again for `retryAt` with its error, or (`retryAt` null) given up at `at` (`dead`). */
  fail(id: string, error: string, at: number, retryAt: number | null): Promise<void>;
  /** Of the store's queued jobs of `kinds` waiting after a failed (or refused) attempt, the one due first: its attempts and when it is due. */
  nextRetry(storeId: string, kinds: readonly string[]): Promise<Pick<Job, 'attempts' | 'runAt'> | null>;
  /** Whether the store has an unfinished job (queued or running) of one of `kinds`. */
  hasUnfinished(storeId: string, kinds: readonly string[]): Promise<boolean>;
  /** Deletes the store's unfinished jobs (queued or running) of `kinds` (null: of every kind); how many. */
  dropUnfinished(storeId: string, kinds: readonly string[] | null): Promise<number>;
}

/**
 * Webhook deliveries (`webhook_deliveries`, the log and dedupe point), with what they write: the
 * catalogue's products, jobs, store events, order signals (`order_signals`).
 */
export interface DeliveryRecords {
  /**
   * A group of deliveries in one transaction, each logged with what it came to, in order: a
   * delivery whose key (its own, or a removal's `removalKey`) is logged already is only counted
   * (`duplicate`). `slice` is started as the transaction begins and asked before each delivery; a
   * group it stops commits the deliveries before. A delivery whose own writes fail rejects with
   * EntryFailed (its index), and nothing of the group is kept.
   */
  commitGroup(group: DeliveryToCommit[], slice: GroupSlice): Promise<Settled[]>;
  /** The delivery's outcome, once known. */
  settle(deliveryId: string, outcome: Outcome, reason: RefusalReason | null): Promise<void>;
  /** How many duplicates of the delivery were counted so far (0 for an unknown one). */
  duplicatesOf(deliveryId: string): Promise<number>;
  /** A queued removal applied (ProductRecords.remove, `confirmed` by the platform or by the body's own rules) with its delivery's outcome, in one transaction. */
  applyRemoval(deliveryId: string, storeId: string, productId: string, removedAt: number, confirmed: boolean, at: number): Promise<RemoveOutcome>;
  /**
   * A queued removal the platform did not confirm: refused (`product_not_removed`) and its key
   * given back (a later delete of the same product version is a delivery of its own), unless a
   * duplicate of it arrived since `duplicatesBefore` were counted: then false, nothing written.
   */
  refuseRemoval(deliveryId: string, duplicatesBefore: number): Promise<boolean>;
}
