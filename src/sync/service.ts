import { createCatalogEntries } from '../catalog/entries.ts';
import type { Catalog } from '../catalog/products.ts';
import { SYNC_KINDS, type CatalogSyncRow, type JobRow, type StoreRow, type SyncKind, type SyncTrigger } from '../db/schema/index.ts';
import type { AppDatabase } from '../db/index.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { yieldToEventLoop } from '../lib/periodic.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { PlatformThrottled } from '../platforms/http.ts';
import type { CatalogPage, EntryData, ProductData } from '../platforms/types.ts';
import type { StoreRegistry } from '../stores/registry.ts';
import type { JobContinuation, JobHandler, JobQueue } from '../webhooks/queue.ts';
import { ENTRY_TYPE_OF, entrySource, productSource, type SyncSource } from './sources.ts';
import { createSyncState, toSyncView, type SyncView } from './state.ts';

export type SyncLog = (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;

interface SyncDeps {
  database: Pick<AppDatabase, 'db' | 'sqlite'>;
  stores: StoreRegistry;
  catalog: Catalog;
  queue: JobQueue;
  clock: Clock;
  settings: PlatformSettings;
  log: SyncLog;
  onQueued?: (() => void) | undefined;
}

/** The queue job that runs a store's pass of one kind, a page per step. */
export const syncJobKind = (kind: SyncKind) => `catalog-sync.${kind}`;

/** Items written per transaction: a page is applied in a few short transactions with a turn of the event loop between them. */
const WRITE_BATCH = 25;

const NO_API_ACCESS = "a store connected through svc's app gives svc no API access: its catalogue fills from webhooks only";

/** What a pass of one kind reads (its source) and how the catalogue takes it. */
interface KindSync<T> {
  source: SyncSource<T>;
  /** Write mapped items listed by the pass that started at `passStartedAt` (inside the batch's transaction). */
  write(items: T[], passStartedAt: number): void;
  /** After a complete pass: what it did not list (and nothing wrote since it started). */
  unlisted(passStartedAt: number): string[];
  /** Remove what the platform no longer has; returns how many were removed. */
  remove(ids: string[]): number;
}

/**
 * Catalogue sync: reads every product, category and content page of a store through its
 * platform's API, one page per job step, one job per kind. Products are applied through the
 * catalogue's ordering rule (the platform's modification time wins, tombstones hold), so a page
 * read before a webhook arrived never overwrites what the webhook applied and never brings back a
 * product a webhook deleted. The next page's position is committed with the page, so a pass
 * survives restarts without applying a page twice.
 */
export function createCatalogSync({ database, clock, stores, catalog, queue, settings, log, onQueued }: SyncDeps) {
  const state = createSyncState(database.db, clock);
  const entries = createCatalogEntries(database.db, clock);

  function kindSync(kind: SyncKind, store: StoreRow): KindSync<unknown> | null {
    const credentials = stores.credentialsOf(store);
    if (kind === 'products') {
      const source = productSource(store, credentials, settings);
      return source && {
        source,
        write(products: ProductData[], passStartedAt) {
          for (const product of products) catalog.upsert(store.id, store.currency, product);
          catalog.markListed(store.id, products.map((product) => product.productId), passStartedAt);
        },
        unlisted: (passStartedAt) => catalog.unlisted(store.id, passStartedAt),
        remove(productIds) {
          const now = clock.now();
          return productIds.filter((productId) => catalog.remove(store.id, productId, now, true) === 'removed').length;
        },
      } as KindSync<ProductData> as KindSync<unknown>;
    }
    const type = ENTRY_TYPE_OF[kind];
    const source = entrySource(type, store, credentials, settings);
    return source && {
      source,
      write: (items: EntryData[], passStartedAt) => entries.upsert(store.id, type, items, passStartedAt),
      unlisted: (passStartedAt) => entries.unlisted(store.id, type, passStartedAt),
      remove: (ids) => entries.remove(store.id, type, ids),
    } as KindSync<EntryData> as KindSync<unknown>;
  }

  /** A page's items (already read), applied; false when the pass was superseded meanwhile (nothing of the batch is written). */
  const applyBatch = database.sqlite.transaction((row: CatalogSyncRow, sync: KindSync<unknown>, items: unknown[], readAt: number, end: CatalogPage<unknown> | null): boolean => {
    if (!state.isCurrent(row.storeId, row.kind, row.runId)) return false;
    const mapped: unknown[] = [];
    for (const item of items) {
      try {
        mapped.push(sync.source.map(item, readAt));
      } catch (error) {
        if (error instanceof ApiError) continue; // an item without an id: nothing to key it by
        throw error;
      }
    }
    sync.write(mapped, row.startedAt);
    if (!end) return true;
    // Only a complete pass knows what the platform no longer has: the sweep commits with its last page
    // (where pages may shift, the candidates are confirmed one by one afterwards instead).
    if (end.next === null && !sync.source.confirmGone) swept.set(row.runId, sync.remove(sync.unlisted(row.startedAt)));
    state.advance(row, end.next, end.items.length);
    return true;
  });
  /** Items removed by the sweep of a pass that just completed (for its log line). */
  const swept = new Map<string, number>();

  /** The unlisted items of a complete pass that the platform's own endpoint says are gone (404), removed. */
  async function sweepConfirmed(row: CatalogSyncRow, sync: KindSync<unknown>): Promise<number> {
    let removed = 0;
    for (const id of sync.unlisted(row.startedAt)) {
      if (await sync.source.confirmGone!(id)) removed += sync.remove([id]);
    }
    return removed;
  }

  function finished(row: CatalogSyncRow, outcome: 'completed' | 'failed', extra: Record<string, unknown> = {}): void {
    const now = state.get(row.storeId, row.kind);
    log(outcome === 'completed' ? 'info' : 'warn', `catalog sync ${outcome}`, {
      store: row.storeId,
      kind: row.kind,
      trigger: row.trigger,
      pages: now?.pages ?? row.pages,
      items: now?.items ?? row.items,
      ms: clock.now() - row.startedAt,
      ...extra,
    });
  }

  function fail(row: CatalogSyncRow, reason: string): void {
    state.fail(row, reason);
    finished(row, 'failed', { error: reason });
  }

  /** One step of a pass of `kind`: read the page at the saved position, apply it, and say when the next is due. */
  const step = (kind: SyncKind) => async (job: JobRow): Promise<void | JobContinuation> => {
    const row = state.get(job.storeId, kind);
    if (!row || row.status !== 'running') return;
    const store = stores.get(job.storeId);
    if (!store || store.status !== 'active') return fail(row, 'the store is inactive (uninstalled)');
    const sync = kindSync(kind, store);
    if (!sync) return fail(row, NO_API_ACCESS);

    let page: CatalogPage<unknown>;
    try {
      page = await sync.source.page(row.cursor);
    } catch (error) {
      if (error instanceof PlatformThrottled) return { runAgainAt: clock.now() + error.waitMs };
      const reason = (error as Error).message ?? String(error);
      if (job.attempts >= queue.maxAttempts) fail(row, reason);
      else state.noteError(row, reason);
      throw error;
    }

    const readAt = clock.now();
    for (let start = 0; ; start += WRITE_BATCH) {
      const last = start + WRITE_BATCH >= page.items.length;
      if (!applyBatch(row, sync, page.items.slice(start, start + WRITE_BATCH), readAt, last ? page : null)) return { runAgainAt: clock.now() };
      if (last) break;
      await yieldToEventLoop();
    }
    if (page.next === null) {
      // A failed confirmation only leaves the item for the next pass: the pass itself is complete.
      if (sync.source.confirmGone) swept.set(row.runId, await sweepConfirmed(row, sync).catch(() => 0));
      finished(row, 'completed', { removed: swept.get(row.runId) ?? 0 });
      swept.delete(row.runId);
      return;
    }
    return { runAgainAt: clock.now() + page.waitMs };
  };

  const handlers: Record<string, JobHandler> = Object.fromEntries(SYNC_KINDS.map((kind) => [syncJobKind(kind), step(kind)]));

  return {
    handlers,

    /**
     * Start a pass of every kind from the first page (a running pass starts over: new credentials may
     * name another shop). Stores whose platform list svc does not read are left alone.
     */
    start(storeId: string, trigger: SyncTrigger): void {
      const store = stores.get(storeId);
      if (!store || store.status !== 'active') return;
      const credentials = stores.credentialsOf(store);
      if (credentials.kind !== 'via-app' && !clientFor(store, credentials, settings)) return;
      for (const kind of SYNC_KINDS) {
        state.begin(storeId, kind, newId(), trigger);
        if (credentials.kind === 'via-app') fail(state.get(storeId, kind)!, NO_API_ACCESS);
        else queue.enqueueOnce(syncJobKind(kind), storeId, {});
      }
      onQueued?.();
    },

    view: (storeId: string): SyncView => toSyncView(state.of(storeId)),

    /** A manual pass (`POST .../sync`, `svc stores sync`): started unless one is already under way. */
    request(storeId: string): void {
      if (!state.running(storeId)) this.start(storeId, 'manual');
    },

    /**
     * Scheduled reconciliation: a pass for every active store with API access whose latest pass
     * started at least `intervalMs` ago (or that never had one) and is not running. Returns how many started.
     */
    reconcileDue(intervalMs: number): number {
      let started = 0;
      for (const store of stores.list()) {
        if (store.status !== 'active' || store.credentialKind === 'via-app' || state.running(store.id)) continue;
        const latest = Math.max(0, ...state.of(store.id).map((row) => row.startedAt));
        if (clock.now() - latest < intervalMs) continue;
        this.start(store.id, 'schedule');
        started++;
      }
      return started;
    },
  };
}

export type CatalogSync = ReturnType<typeof createCatalogSync>;
