// The contract of the stores, sync, job and delivery records (src/storage/stores.ts), held on every
// engine under test: what each method stores and answers, the job queue's order and claims, the
// delivery group's dedupe and ordering, and what an atomic method leaves when it fails: nothing.
// Each test opens a migrated, empty engine; what no record method reads back (store events, the
// delivery log, order signals, job rows) is read with plain SQL that both engines answer alike.
import { afterEach, describe, expect, test } from 'bun:test';
import { entryRows, type CatalogEntry } from '../../src/catalog/entries.ts';
import type { ProductData } from '../../src/catalog/product-data.ts';
import { createCatalog, type PreparedProduct } from '../../src/catalog/products.ts';
import { EntryFailed, type GroupSlice } from '../../src/lib/group-commit.ts';
import { fixedClock } from '../../src/lib/clock.ts';
import type { ProductRecords } from '../../src/storage/content.ts';
import { postgresProductRecords } from '../../src/storage/postgres/catalog.ts';
import { postgresDeliveryRecords } from '../../src/storage/postgres/deliveries.ts';
import { postgresJobRecords } from '../../src/storage/postgres/jobs.ts';
import { postgresStoreRecords } from '../../src/storage/postgres/stores.ts';
import { postgresSyncStateRecords } from '../../src/storage/postgres/sync.ts';
import { sqliteProductRecords } from '../../src/storage/sqlite/catalog.ts';
import { sqliteDeliveryRecords } from '../../src/storage/sqlite/deliveries.ts';
import { sqliteJobRecords } from '../../src/storage/sqlite/jobs.ts';
import { sqliteStoreRecords } from '../../src/storage/sqlite/stores.ts';
import { sqliteSyncStateRecords } from '../../src/storage/sqlite/sync.ts';
import type { DeliveryRecords, JobRecords, StoreRecords, SyncStateRecords } from '../../src/storage/stores.ts';
import type { StoreRecord } from '../../src/stores/registry.ts';
import type { PassRef } from '../../src/sync/state.ts';
import type { DeliveryEffect, DeliveryToCommit } from '../../src/webhooks/deliveries.ts';
import { createDispatcher } from '../../src/webhooks/dispatch.ts';
import { createStoreRegistry, PING_GRACE_MS } from '../../src/stores/registry.ts';
import { createSecretBox } from '../../src/lib/secrets.ts';
import { queuedJob, type NewJob } from '../../src/webhooks/queue.ts';
import { product, store, T0 } from '../helpers/catalog-data.ts';
import { ENGINES, query, storageOn, type OpenedEngine } from '../helpers/storage.ts';

/** The domain's records on the engine opened, with the catalogue's (to read back what they write). */
const recordsOf = (opened: OpenedEngine): { stores: StoreRecords; syncs: SyncStateRecords; jobs: JobRecords; deliveries: DeliveryRecords; products: ProductRecords } =>
  opened.kind === 'sqlite'
    ? { stores: sqliteStoreRecords(opened.database), syncs: sqliteSyncStateRecords(opened.database), jobs: sqliteJobRecords(opened.database), deliveries: sqliteDeliveryRecords(opened.database), products: sqliteProductRecords(opened.database) }
    : { stores: postgresStoreRecords(opened.client), syncs: postgresSyncStateRecords(opened.client), jobs: postgresJobRecords(opened.client), deliveries: postgresDeliveryRecords(opened.client), products: postgresProductRecords(opened.client) };
type Records = ReturnType<typeof recordsOf>;

const prepared = (data: ProductData): PreparedProduct => ({ product: data, description: { known: null } });

function entry(storeId: string, entryId: string, listedAt: number): CatalogEntry {
  return { id: `row-${storeId}-${entryId}`, storeId, type: 'page', entryId, handle: null, title: `Page ${entryId}`, url: null, platformUpdatedAt: null, listedAt, syncedAt: listedAt, createdAt: listedAt };
}

const job = (id: string, overrides: Partial<NewJob> = {}): NewJob => ({ ...queuedJob('work', 's1', { n: id }, T0), id, ...overrides });

/** A group slice that takes every delivery (or the first `limit`). */
const sliceOf = (limit = Infinity): GroupSlice & { started: number } => ({
  floor: 0,
  started: 0,
  start() {
    this.started++;
  },
  takes() {
    return limit-- > 0;
  },
});

let delivered = 0;
function delivery(storeId: string, effect: DeliveryEffect, overrides: Partial<DeliveryToCommit> = {}): DeliveryToCommit {
  return { id: `d-${String(++delivered).padStart(6, '0')}`, storeId, platform: 'platform-c', topic: 'product.updated', dedupeKey: `key-${delivered}`, keyedRemovalOf: null, sharesAppSecret: false, effect, at: T0, ...overrides };
}

/**
 * Makes every `operation` (INSERT, UPDATE, DELETE) on `table` fail from now on, with a trigger the
 * engine runs inside the statement: what a write that fails half-way through an atomic method looks like.
 */
async function failWrites(opened: OpenedEngine, operation: 'INSERT' | 'UPDATE' | 'DELETE', table: string): Promise<void> {
  const name = `fail_${operation.toLowerCase()}_${table}`;
  if (opened.kind === 'sqlite') {
    opened.database.sqlite.run(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    return;
  }
  await opened.client.sql.unsafe("CREATE OR REPLACE FUNCTION refused_by_the_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
  await opened.client.sql.unsafe(`CREATE TRIGGER ${name} BEFORE ${operation} ON ${table} FOR EACH ROW EXECUTE FUNCTION refused_by_the_test()`);
}

const rowsOf = (opened: OpenedEngine, table: string, order = 'id') => query(opened, `SELECT * FROM ${table} ORDER BY ${order}`);
const countOf = async (opened: OpenedEngine, table: string) => Number((await query(opened, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
const eventsOf = async (opened: OpenedEngine, storeId: string) => (await query(opened, 'SELECT kind FROM store_events WHERE store_id = ? ORDER BY kind', storeId)).map((row) => row.kind);
const jobStates = async (opened: OpenedEngine) => (await query(opened, 'SELECT id, status FROM jobs ORDER BY id')).map((row) => `${row.id}:${row.status}`);

describe.each(ENGINES)('stores, sync, job and delivery records on $name', (engine) => {
  let opened: OpenedEngine;
  let records: Records;
  afterEach(() => opened.close());
  /** A migrated, empty engine with two stores. */
  async function open(): Promise<void> {
    opened = await engine.open();
    records = recordsOf(opened);
    for (const id of ['s1', 's2']) await records.stores.add(store(id));
  }

  describe('store records', () => {
    test('add stores the store as given (times as numbers); byId and byRef read it back, null when unknown; list is oldest first, then by id', async () => {
      await open();
      await records.stores.add(store('s0', { createdAt: T0 + 5, settings: { returnPolicy: { days: 30 } } as never, hookTopics: ['a', 'b'] }));
      expect(await records.stores.byId('s0')).toEqual(store('s0', { createdAt: T0 + 5, settings: { returnPolicy: { days: 30 } } as never, hookTopics: ['a', 'b'] }));
      expect(typeof (await records.stores.byId('s1'))!.createdAt).toBe('number');
      expect((await records.stores.byRef('platform-c', 'https://s2.example'))!.id).toBe('s2');
      expect(await records.stores.byRef('platform-b', 'https://s2.example')).toBeNull();
      expect(await records.stores.byId('nope')).toBeNull();
      expect((await records.stores.list()).map((row) => row.id)).toEqual(['s1', 's2', 's0']);
    });

    test('add of a store whose platform already has its reference stores nothing and answers null', async () => {
      await open();
      expect(await records.stores.add(store('s3', { platformRef: 'https://s1.example' }))).toBeNull();
      expect(await records.stores.byId('s3')).toBeNull();
      expect(await records.stores.add(store('s3', { platform: 'platform-b', platformRef: 'https://s1.example' }))).not.toBeNull();
    });

    test('saveCredentials replaces the credentials and reconnects the store; the currency only when given; ref_taken (nothing written) for another store\'s reference; null for an unknown store', async () => {
      await open();
      await records.stores.disconnect('s1', T0 + 1);
      await records.stores.setHooks('s1', { hookStatus: 'failed', hookError: 'boom', hookTopics: ['x'] }, T0 + 2);
      const saved = { platformRef: 'https://s1-new.example', credentialKind: 'rest-keys' as const, credentials: 'enc:v1:new', webhookSecret: 'enc:v1:kept', hookStatus: 'pending' as const };
      expect(await records.stores.saveCredentials('s1', saved, T0 + 10)).toEqual({
        ...(await records.stores.byId('s1'))!,
        ...saved,
        currency: 'EUR',
        status: 'active',
        hookError: null,
        hookTopics: [],
        deactivatedAt: null,
        signalsWithdrawnAt: null,
        disconnectedAt: null,
        updatedAt: T0 + 10,
      });
      expect((await records.stores.saveCredentials('s1', { ...saved, currency: 'USD' }, T0 + 11) as StoreRecord).currency).toBe('USD');
      expect(await records.stores.saveCredentials('s2', { ...saved, credentials: 'enc:v1:other' }, T0 + 12)).toBe('ref_taken');
      expect((await records.stores.byId('s2'))!.credentials).toBe('enc:v1:sealed-credentials-of-s2');
      expect(await records.stores.saveCredentials('nope', saved, T0)).toBeNull();
    });

    test('add and saveCredentials store the connection job given with them, in their transaction: a store never stands without it; nothing of either when the store is refused or the job fails', async () => {
      await open();
      const connecting = (id: string, storeId: string) => job(id, { kind: 'store.connect', storeId, status: 'running', attempts: 1, leaseUntil: T0 + 60_000 });
      expect(await records.stores.add(store('s3', { platformRef: 'r3' }), connecting('j1', 's3'))).not.toBeNull();
      const saved = { platformRef: 'r3', credentialKind: 'rest-keys' as const, credentials: 'enc:v1:new', webhookSecret: 'enc:v1:kept', hookStatus: 'pending' as const };
      expect(await records.stores.saveCredentials('s3', saved, T0 + 10, connecting('j2', 's3'))).not.toBeNull();
      expect((await rowsOf(opened, 'jobs')).map((row) => [row.id, row.kind, row.store_id, row.status, Number(row.attempts), Number(row.lease_until)])).toEqual([
        ['j1', 'store.connect', 's3', 'running', 1, T0 + 60_000],
        ['j2', 'store.connect', 's3', 'running', 1, T0 + 60_000],
      ]);
      // Refused (another store's reference): neither the store nor its job.
      expect(await records.stores.add(store('s4', { platformRef: 'https://s1.example' }), connecting('j3', 's4'))).toBeNull();
      expect(await records.stores.saveCredentials('s3', { ...saved, platformRef: 'https://s2.example' }, T0 + 11, connecting('j4', 's3'))).toBe('ref_taken');
      expect(await records.stores.saveCredentials('nope', saved, T0 + 12, connecting('j5', 'nope'))).toBeNull();
      expect(await jobStates(opened)).toEqual(['j1:running', 'j2:running']);
      // The job's write fails: the store (or its new credentials) is not written either.
      await failWrites(opened, 'INSERT', 'jobs');
      await expect(records.stores.add(store('s5', { platformRef: 'r5' }), connecting('j6', 's5'))).rejects.toThrow('refused by the test');
      await expect(records.stores.saveCredentials('s3', { ...saved, credentials: 'enc:v1:newer' }, T0 + 13, connecting('j7', 's3'))).rejects.toThrow('refused by the test');
      expect(await records.stores.byId('s5')).toBeNull();
      expect((await records.stores.byId('s3'))!.credentials).toBe('enc:v1:new');
      expect(await countOf(opened, 'jobs')).toBe(2);
    });

    test('sealedValues: the credentials and webhook secret of each store holding one not stored plain, by id', async () => {
      await open();
      await records.stores.add(store('s3', { platformRef: 'r3', credentials: 'plain:{}', webhookSecret: 'plain:x' }));
      await records.stores.add(store('s4', { platformRef: 'r4', credentials: 'plain:{}', webhookSecret: null }));
      await records.stores.add(store('s5', { platformRef: 'r5', credentials: 'plain:{}', webhookSecret: 'enc:v1:s5' }));
      expect(await records.stores.sealedValues()).toEqual([
        { id: 's1', credentials: 'enc:v1:sealed-credentials-of-s1', webhookSecret: 'enc:v1:sealed-secret-of-s1' },
        { id: 's2', credentials: 'enc:v1:sealed-credentials-of-s2', webhookSecret: 'enc:v1:sealed-secret-of-s2' },
        { id: 's5', credentials: 'plain:{}', webhookSecret: 'enc:v1:s5' },
      ]);
    });

    test('setHooks writes only the fields given, moving the update time only with one; setCurrency; null for an unknown store', async () => {
      await open();
      const confirmed = await records.stores.setHooks('s1', { hooksConfirmedAt: T0 + 3 }, null);
      expect(confirmed).toEqual(store('s1', { hooksConfirmedAt: T0 + 3 }));
      const registered = await records.stores.setHooks('s1', { hookStatus: 'registered', hookTopics: ['product.updated'], hookError: null, hooksRegisteredAt: T0 + 4 }, T0 + 4);
      expect(registered).toEqual(store('s1', { hooksConfirmedAt: T0 + 3, hookStatus: 'registered', hookTopics: ['product.updated'], hooksRegisteredAt: T0 + 4, updatedAt: T0 + 4 }));
      expect((await records.stores.setCurrency('s1', 'GBP', T0 + 5))!).toMatchObject({ currency: 'GBP', updatedAt: T0 + 5 });
      expect(await records.stores.setHooks('nope', { hookError: 'x' }, null)).toBeNull();
      expect(await records.stores.setCurrency('nope', 'GBP', T0)).toBeNull();
    });

    test('saveSettings replaces the settings and moves the update time to its own, or 1 ms past the previous one when that is not earlier', async () => {
      await open();
      const settings = { returnPolicy: { days: 14 } } as never;
      expect(await records.stores.saveSettings('s1', settings, T0 + 100)).toMatchObject({ settings, updatedAt: T0 + 100 });
      expect(await records.stores.saveSettings('s1', {}, T0 + 50)).toMatchObject({ settings: {}, updatedAt: T0 + 101 });
      expect(await records.stores.saveSettings('nope', {}, T0)).toBeNull();
    });

    test('disconnect: inactive, disconnected and withdrawn, the first times kept and the events recorded once; null for an unknown store', async () => {
      await open();
      const once = await records.stores.disconnect('s1', T0 + 10);
      expect(once).toMatchObject({ status: 'inactive', deactivatedAt: T0 + 10, disconnectedAt: T0 + 10, signalsWithdrawnAt: T0 + 10, updatedAt: T0 + 10 });
      const twice = await records.stores.disconnect('s1', T0 + 5);
      expect(twice).toMatchObject({ deactivatedAt: T0 + 10, disconnectedAt: T0 + 10, signalsWithdrawnAt: T0 + 10, updatedAt: T0 + 11 });
      expect(await eventsOf(opened, 's1')).toEqual(['disconnected', 'signals_withdrawn']);
      expect(await records.stores.disconnect('nope', T0)).toBeNull();
      expect(await countOf(opened, 'store_events')).toBe(2);
    });

    test('deactivate: inactive, its signals withdrawn, both recorded as store events', async () => {
      await open();
      await records.stores.deactivate('s1', T0 + 7);
      expect(await records.stores.byId('s1')).toMatchObject({ status: 'inactive', deactivatedAt: T0 + 7, signalsWithdrawnAt: T0 + 7, updatedAt: T0 + 7, disconnectedAt: null });
      expect(await eventsOf(opened, 's1')).toEqual(['app_uninstalled', 'signals_withdrawn']);
    });

    test('stop: the store disconnected, its running passes failed with the reason (not counted), its unfinished jobs dropped; the store as it was; null and nothing written for an unknown store', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: null }], T0);
      await records.syncs.begin('s2', 'manual', [{ kind: 'products', runId: 'r2', failed: null, job: null }], T0);
      for (const [id, storeId, status] of [['j1', 's1', 'queued'], ['j2', 's1', 'running'], ['j3', 's1', 'done'], ['j4', 's2', 'queued']] as const) await records.jobs.enqueue(job(id, { storeId, status }));
      const stopped = await records.stores.stop('s1', 'the store is being removed', T0 + 20);
      expect(stopped).toEqual({ store: store('s1'), dropped: 2 });
      expect(await records.stores.byId('s1')).toMatchObject({ status: 'inactive', disconnectedAt: T0 + 20 });
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ status: 'failed', error: 'the store is being removed', finishedAt: T0 + 20, failedPasses: 0 });
      expect(await records.syncs.get('s2', 'products')).toMatchObject({ status: 'running' });
      expect(await jobStates(opened)).toEqual(['j3:done', 'j4:queued']);
      expect(await records.stores.stop('nope', 'x', T0)).toBeNull();
    });

    test('holdings counts what svc holds for the store by kind; removeAll deletes every row that names it (and it), answering those counts, and leaves other stores alone', async () => {
      await open();
      for (const storeId of ['s1', 's2']) {
        await records.products.upsert(storeId, 'EUR', product('101', T0), { known: null }, T0);
        await records.products.upsert(storeId, 'EUR', product('102', T0, { variants: [] }), { known: null }, T0);
        await records.deliveries.commitGroup([delivery(storeId, { kind: 'order', orderId: '9', status: 'paid' }), delivery(storeId, { kind: 'privacy' })], sliceOf());
        await records.syncs.begin(storeId, 'manual', [{ kind: 'pages', runId: `r-${storeId}`, failed: null, job: 'catalog-sync.pages' }], T0);
        await records.syncs.applyPage({ storeId, kind: 'pages', runId: `r-${storeId}` }, T0, { kind: 'entries', entries: [entry(storeId, 'e1', T0)] }, null, T0);
      }
      await records.products.remove('s1', '102', T0 + 1, true, T0 + 1);
      await query(opened, "INSERT INTO api_keys (id, name, key_hash, key_prefix, scopes, allowed_domains, store_id, created_at) VALUES ('k1', '', 'h1', 'svc_', '[]', '[]', 's1', 1)");
      const expected = { products: 1, enrichments: 0, faqs: 0, categories: 0, pages: 1, deliveries: 2, orderSignals: 1, storeEvents: 1, keys: 1 };
      expect(await records.stores.holdings('s1')).toEqual(expected);
      expect(await records.stores.holdings('nope')).toEqual({ products: 0, enrichments: 0, faqs: 0, categories: 0, pages: 0, deliveries: 0, orderSignals: 0, storeEvents: 0, keys: 0 });
      const kept = await records.stores.holdings('s2');
      expect(await records.stores.removeAll('s1')).toEqual(expected);
      expect(await records.stores.byId('s1')).toBeNull();
      for (const table of ['products', 'product_variants', 'catalog_entries', 'catalog_syncs', 'webhook_deliveries', 'order_signals', 'store_events', 'jobs', 'api_keys']) {
        const column = table === 'product_variants' ? 'product_row_id IN (SELECT id FROM products WHERE store_id = ?)' : 'store_id = ?';
        expect(Number((await query(opened, `SELECT count(*) AS n FROM ${table} WHERE ${column}`, 's1'))[0]!.n)).toBe(0);
      }
      expect(await records.stores.holdings('s2')).toEqual(kept);
      expect(await countOf(opened, 'product_variants')).toBe(2); // the other store's
    });

    test('finishDisconnect: the hooks as given (none: unchanged) and the unfinished jobs dropped, in one transaction; what is kept', async () => {
      await open();
      await records.jobs.enqueue(job('j1', { storeId: 's1' }));
      await records.stores.setHooks('s1', { hookStatus: 'registered', hookTopics: ['t'], hooksRegisteredAt: T0 }, T0);
      const finished = await records.stores.finishDisconnect('s1', { hookStatus: 'unregistered', hookTopics: [], hookError: null, hooksRegisteredAt: null, hooksConfirmedAt: null }, T0 + 9);
      expect(finished).toEqual({ kept: { products: 0, enrichments: 0, faqs: 0, categories: 0, pages: 0, deliveries: 0, orderSignals: 0, storeEvents: 0, keys: 0 }, dropped: 1 });
      expect(await records.stores.byId('s1')).toMatchObject({ hookStatus: 'unregistered', hookTopics: [], hooksRegisteredAt: null, updatedAt: T0 + 9 });
      expect((await records.stores.finishDisconnect('s2', null, T0 + 10)).dropped).toBe(0);
      expect(await records.stores.byId('s2')).toEqual(store('s2'));
    });

    test('a write that fails puts none of the values it was given in its error: not the sealed credentials, not the webhook secret', async () => {
      await open();
      const told = async (attempt: Promise<unknown>) => {
        const failure = await attempt.then(
          () => null,
          (error: unknown) => error as Error,
        );
        expect(failure).toBeInstanceOf(Error);
        return `${String(failure)} ${failure!.stack ?? ''} ${JSON.stringify(failure)} ${String((failure as { cause?: unknown }).cause ?? '')}`;
      };
      // A column refused (PostgreSQL's DETAIL would quote the whole row).
      const missing = await told(records.stores.add(store('s9', { platformRef: 'r9', credentials: 'enc:v1:SEALED-CREDENTIALS-9', webhookSecret: 'enc:v1:SEALED-SECRET-9', hookTopics: null as unknown as string[] })));
      for (const secret of ['SEALED-CREDENTIALS-9', 'SEALED-SECRET-9']) expect(missing).not.toContain(secret);
      expect(await records.stores.byId('s9')).toBeNull();
      // A value refused by its column's type, whose message PostgreSQL writes with the value in it (SQLite takes it as it is).
      if (opened.kind === 'postgres') {
        const mistyped = await told(records.stores.add(store('s8', { platformRef: 'r8', credentials: 'enc:v1:SEALED-CREDENTIALS-8', hooksRegisteredAt: 'SEALED-TIME-8' as unknown as number })));
        for (const secret of ['SEALED-CREDENTIALS-8', 'SEALED-TIME-8']) expect(mistyped).not.toContain(secret);
      }
    });
  });

  describe('sync state records', () => {
    const pass = (storeId: string, runId: string, kind: PassRef['kind'] = 'products'): PassRef => ({ storeId, kind, runId });

    test('begin starts each pass from its first page, superseding a running one; a failed pass ends at once (one more failed pass); a job is queued once per kind; get, of and running read them', async () => {
      await open();
      await records.syncs.begin('s1', 'connect', [{ kind: 'products', runId: 'r1', failed: null, job: 'catalog-sync.products' }, { kind: 'pages', runId: 'r2', failed: 'no API access', job: null }], T0);
      expect(await records.syncs.get('s1', 'products')).toEqual({ storeId: 's1', kind: 'products', runId: 'r1', trigger: 'connect', status: 'running', cursor: null, pageSpan: null, pages: 0, items: 0, sweptThrough: null, removed: 0, error: null, startedAt: T0, finishedAt: null, lastCompletedAt: null, failedPasses: 0 });
      expect(await records.syncs.get('s1', 'pages')).toMatchObject({ status: 'failed', error: 'no API access', finishedAt: T0, failedPasses: 1 });
      expect(await records.syncs.get('s1', 'categories')).toBeNull();
      expect(await records.syncs.running('s1')).toBe(true);
      expect(await records.syncs.running('s2')).toBe(false);
      await records.syncs.applyPage(pass('s1', 'r1'), T0, { kind: 'products', currency: null, products: [] }, { next: '2', items: 5, pageSpan: '1:5' }, T0);
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r3', failed: null, job: 'catalog-sync.products' }], T0 + 10);
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ runId: 'r3', trigger: 'manual', status: 'running', cursor: null, pageSpan: null, pages: 0, items: 0, startedAt: T0 + 10 });
      expect((await records.syncs.of('s1')).map((row) => row.kind).sort()).toEqual(['pages', 'products']);
      expect(await records.syncs.of('s2')).toEqual([]);
      expect((await query(opened, 'SELECT kind, store_id AS store, status FROM jobs')).map((row) => `${row.kind}:${row.store}:${row.status}`)).toEqual(['catalog-sync.products:s1:queued']);
    });

    test('noteError keeps the pass running with the error; fail ends it as failed, one more failed pass in a row; neither writes to a superseded pass', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: null }], T0);
      await records.syncs.noteError(pass('s1', 'r1'), 'answered 503');
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ status: 'running', error: 'answered 503' });
      await records.syncs.fail(pass('s1', 'old'), 'late', T0 + 1);
      await records.syncs.fail(pass('s1', 'r1'), 'gave up', T0 + 2);
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ status: 'failed', error: 'gave up', finishedAt: T0 + 2, failedPasses: 1 });
    });

    test('pause keeps the first pause and drops the store\'s unfinished jobs of those kinds only; resume queues the job of each running pass again; null for an unknown store', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: 'catalog-sync.products' }, { kind: 'pages', runId: 'r2', failed: 'no access', job: null }], T0);
      await records.jobs.enqueue(job('other', { kind: 'store.connect', storeId: 's1' }));
      expect(await records.syncs.pause('s1', ['catalog-sync.products', 'catalog-sync.pages'], T0 + 5)).toMatchObject({ id: 's1', syncPausedAt: T0 + 5 });
      expect((await records.syncs.pause('s1', ['catalog-sync.products'], T0 + 9))!.syncPausedAt).toBe(T0 + 5);
      expect((await query(opened, 'SELECT kind FROM jobs')).map((row) => row.kind)).toEqual(['store.connect']);
      const resumed = await records.syncs.resume('s1', { products: 'catalog-sync.products', categories: 'catalog-sync.categories', pages: 'catalog-sync.pages' }, T0 + 20);
      expect(resumed).toMatchObject({ id: 's1', syncPausedAt: null });
      expect((await query(opened, 'SELECT kind, run_at AS at FROM jobs ORDER BY kind')).map((row) => `${row.kind}@${Number(row.at) - T0}`)).toEqual(['catalog-sync.products@20', 'store.connect@0']);
      expect(await records.syncs.pause('nope', [], T0)).toBeNull();
      expect(await records.syncs.resume('nope', { products: 'a', categories: 'b', pages: 'c' }, T0)).toBeNull();
    });

    test('applyPage writes a batch of products, listed by the pass, and with the page\'s end moves the pass past it; false and nothing written once the pass is superseded', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: null }], T0);
      const written = await records.syncs.applyPage(pass('s1', 'r1'), T0, { kind: 'products', currency: 'EUR', products: [prepared(product('101', T0)), prepared(product('102', T0))] }, null, T0 + 3);
      expect(written).toBe(true);
      expect(await records.products.get('s1', '101')).toMatchObject({ currency: 'EUR', listedAt: T0, syncedAt: T0 + 3 });
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ pages: 0, cursor: null });
      await records.syncs.applyPage(pass('s1', 'r1'), T0, { kind: 'products', currency: 'EUR', products: [prepared(product('103', T0))] }, { next: 'cursor-2', items: 3, pageSpan: '101:103' }, T0 + 4);
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ pages: 1, items: 3, cursor: 'cursor-2', pageSpan: '101:103', sweptThrough: null });
      await records.syncs.noteError(pass('s1', 'r1'), 'a retry');
      await records.syncs.applyPage(pass('s1', 'r1'), T0, { kind: 'products', currency: 'EUR', products: [] }, { next: null, items: 0, pageSpan: null }, T0 + 5);
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ pages: 2, items: 3, cursor: null, sweptThrough: '', error: null });
      expect(await records.syncs.applyPage(pass('s1', 'superseded'), T0, { kind: 'products', currency: 'EUR', products: [prepared(product('104', T0))] }, { next: 'x', items: 1, pageSpan: null }, T0 + 6)).toBe(false);
      expect(await records.products.get('s1', '104')).toBeNull();
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ pages: 2 });
    });

    test('applyPage writes a batch of categories or pages, each replacing its stored row', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'pages', runId: 'r1', failed: null, job: null }], T0);
      expect(await records.syncs.applyPage(pass('s1', 'r1', 'pages'), T0, { kind: 'entries', entries: [entry('s1', 'e1', T0), entry('s1', 'e2', T0)] }, { next: null, items: 2, pageSpan: null }, T0)).toBe(true);
      expect((await query(opened, 'SELECT entry_id AS id FROM catalog_entries ORDER BY entry_id')).map((row) => row.id)).toEqual(['e1', 'e2']);
      expect(await records.syncs.get('s1', 'pages')).toMatchObject({ pages: 1, items: 2, sweptThrough: '' });
    });

    test('a batch whose write fails leaves nothing of it: no product of the batch and the pass where it was', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: null }], T0);
      const broken = product('102', T0, { title: null as unknown as string });
      await expect(records.syncs.applyPage(pass('s1', 'r1'), T0, { kind: 'products', currency: null, products: [prepared(product('101', T0)), prepared(broken)] }, { next: 'c2', items: 2, pageSpan: null }, T0)).rejects.toThrow();
      expect(await records.products.get('s1', '101')).toBeNull();
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ pages: 0, items: 0, cursor: null });
    });

    test('sweepStep removing the unlisted: those of the chunk removed and the position saved; through null completes the pass (ending the streak of failed passes); without removing, a chunk with unlisted items writes nothing; null once superseded', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r0', failed: 'gave up', job: null }], T0); // one failed pass before
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: null }], T0 + 100);
      expect((await records.syncs.get('s1', 'products'))!.failedPasses).toBe(1);
      for (const id of ['101', '102', '103']) await records.products.upsert('s1', null, product(id, T0), { known: null }, T0);
      await records.syncs.applyPage(pass('s1', 'r1'), T0 + 100, { kind: 'products', currency: null, products: [prepared(product('102', T0))] }, { next: null, items: 1, pageSpan: null }, T0 + 100);
      expect(await records.syncs.sweepStep(pass('s1', 'r1'), T0 + 100, { kind: 'products' }, '', 2, false, T0 + 200)).toEqual({ unlisted: ['101'], through: '102' });
      expect(await records.products.get('s1', '101')).not.toBeNull();
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ sweptThrough: '' });
      expect(await records.syncs.sweepStep(pass('s1', 'r1'), T0 + 100, { kind: 'products' }, '', 2, true, T0 + 200)).toEqual({ unlisted: ['101'], through: '102' });
      expect(await records.products.get('s1', '101')).toBeNull();
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ status: 'running', sweptThrough: '102', removed: 1 });
      expect(await records.syncs.sweepStep(pass('s1', 'other'), T0 + 100, { kind: 'products' }, '102', 2, true, T0 + 200)).toBeNull();
      expect(await records.products.get('s1', '103')).not.toBeNull();
      expect(await records.syncs.sweepStep(pass('s1', 'r1'), T0 + 100, { kind: 'products' }, '102', 2, true, T0 + 300)).toEqual({ unlisted: ['103'], through: null });
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ status: 'done', sweptThrough: null, removed: 2, finishedAt: T0 + 300, lastCompletedAt: T0 + 300, failedPasses: 0 });
    });

    test('sweptThrough removes what was confirmed gone and saves the position, or completes the pass; false (nothing written) once superseded; entries are deleted', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'pages', runId: 'r1', failed: null, job: null }], T0 + 100);
      await records.syncs.applyPage(pass('s1', 'r1', 'pages'), T0, { kind: 'entries', entries: [entry('s1', 'e1', T0), entry('s1', 'e2', T0)] }, { next: null, items: 2, pageSpan: null }, T0);
      expect(await records.syncs.sweptThrough(pass('s1', 'r2', 'pages'), { kind: 'entries', type: 'page' }, ['e1'], 'e1', T0 + 200)).toBe(false);
      expect(await countOf(opened, 'catalog_entries')).toBe(2);
      expect(await records.syncs.sweptThrough(pass('s1', 'r1', 'pages'), { kind: 'entries', type: 'page' }, ['e1'], 'e1', T0 + 200)).toBe(true);
      expect(await records.syncs.get('s1', 'pages')).toMatchObject({ sweptThrough: 'e1', removed: 1, status: 'running' });
      expect(await records.syncs.sweptThrough(pass('s1', 'r1', 'pages'), { kind: 'entries', type: 'page' }, [], null, T0 + 300)).toBe(true);
      expect(await records.syncs.get('s1', 'pages')).toMatchObject({ status: 'done', lastCompletedAt: T0 + 300 });
      expect((await query(opened, 'SELECT entry_id AS id FROM catalog_entries')).map((row) => row.id)).toEqual(['e2']);
    });
  });

  describe('job records (the queue)', () => {
    test('enqueue stores the job as given; claim takes due jobs by run time, then id, counting the attempt and leasing it; null when none is due', async () => {
      await open();
      expect(await records.jobs.enqueue(job('j2'))).toEqual({ ...job('j2'), lastError: null, finishedAt: null });
      await records.jobs.enqueue(job('j1'));
      await records.jobs.enqueue(job('j0', { runAt: T0 + 10 }));
      await records.jobs.enqueue(job('j3', { runAt: T0 - 1 }));
      const claimed: string[] = [];
      for (let next = await records.jobs.claim(T0, T0 + 60_000, null); next; next = await records.jobs.claim(T0, T0 + 60_000, null)) {
        expect(next).toMatchObject({ status: 'running', attempts: 1, leaseUntil: T0 + 60_000 });
        claimed.push(next.id);
      }
      expect(claimed).toEqual(['j3', 'j1', 'j2']);
      expect((await records.jobs.claim(T0 + 10, T0 + 60_000, null))!.id).toBe('j0');
    });

    test('claim takes another store\'s due job before the next of the store given, and that store\'s when it is the only one due; a running job whose lease ended is taken again', async () => {
      await open();
      await records.jobs.enqueue(job('a1', { storeId: 'x' }));
      await records.jobs.enqueue(job('a2', { storeId: 'x' }));
      await records.jobs.enqueue(job('b1', { storeId: 'y', runAt: T0 + 1 }));
      expect((await records.jobs.claim(T0 + 1, T0 + 50, 'x'))!.id).toBe('b1');
      expect((await records.jobs.claim(T0 + 1, T0 + 50, 'y'))!.id).toBe('a1');
      expect((await records.jobs.claim(T0 + 1, T0 + 50, 'x'))!.id).toBe('a2');
      expect(await records.jobs.claim(T0 + 49, T0 + 99, null)).toBeNull();
      const again = await records.jobs.claim(T0 + 50, T0 + 99, null);
      expect(again).toMatchObject({ id: 'a1', attempts: 2, leaseUntil: T0 + 99 });
    });

    test('claims at the same time never take the same job', async () => {
      await open();
      for (let i = 0; i < 6; i++) await records.jobs.enqueue(job(`j${i}`, { storeId: `s${i % 2}` }));
      const claimed = await Promise.all(Array.from({ length: 6 }, () => records.jobs.claim(T0, T0 + 60_000, null)));
      expect(claimed.map((claimedJob) => claimedJob?.id).sort()).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5']);
      expect(await records.jobs.claim(T0, T0 + 60_000, null)).toBeNull();
    });

    test.skipIf(engine.name !== 'postgres')('a claim passes over a job another transaction holds (a claim in hand elsewhere) and takes the next one due, never waiting for it', async () => {
      await open();
      await records.jobs.enqueue(job('j0'));
      await records.jobs.enqueue(job('j1'));
      if (opened.kind !== 'postgres') return;
      // Were the claim to wait for the held job, it would wait for this transaction, which waits for it: the test would time out.
      const claimed = await opened.client.sql.begin(async (tx) => {
        await tx`SELECT id FROM jobs WHERE id = 'j0' FOR UPDATE`;
        return records.jobs.claim(T0, T0 + 60_000, null);
      });
      expect(claimed?.id).toBe('j1');
    });

    test('enqueueOnce: a queued job of the kind and store is made due (never later), a running one left as it is, else the job stored; many at the same time store one', async () => {
      await open();
      const first = await records.jobs.enqueueOnce(job('j1', { runAt: T0 + 100 }));
      expect(first.id).toBe('j1');
      expect(await records.jobs.enqueueOnce(job('j2', { runAt: T0 + 50 }))).toMatchObject({ id: 'j1', runAt: T0 + 50 });
      expect(await records.jobs.enqueueOnce(job('j3', { runAt: T0 + 70 }))).toMatchObject({ id: 'j1', runAt: T0 + 50 });
      expect((await records.jobs.enqueueOnce(job('j4', { storeId: 's2' }))).id).toBe('j4');
      await records.jobs.claim(T0 + 50, T0 + 1000, 's2');
      expect(await records.jobs.enqueueOnce(job('j5'))).toMatchObject({ id: 'j1', status: 'running', runAt: T0 + 50 });
      await records.jobs.complete('j1', T0 + 60);
      expect((await records.jobs.enqueueOnce(job('j6'))).id).toBe('j6');
      const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => records.jobs.enqueueOnce(job(`r${i}`, { kind: 'raced', storeId: 's9' }))));
      expect(new Set(raced.map((stored) => stored.id)).size).toBe(1);
      expect(Number((await query(opened, "SELECT count(*) AS n FROM jobs WHERE kind = 'raced'"))[0]!.n)).toBe(1);
    });

    test('enqueueing the same job twice creates one: enqueueOnce from two instances at the same time stores one row, and the database itself refuses a second unfinished job of the key', async () => {
      await open();
      const other = await storageOn(opened);
      try {
        // Two instances (their own connections), each enqueueing the same job several times at once.
        const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? records.jobs : other.storage.jobs).enqueueOnce(job(`r${i}`, { kind: 'raced', storeId: 's9', runAt: T0 + 100 - i }))));
        expect(new Set(raced.map((stored) => stored.id)).size).toBe(1);
        const rows = await query(opened, "SELECT id, active_key, run_at FROM jobs WHERE kind = 'raced'");
        expect(rows.map((row) => [row.active_key, Number(row.run_at)])).toEqual([['raced:s9', T0 + 93]]); // due by the soonest asked for
        // The unique index, not the records' care: a plain insert of another unfinished job of that key fails and stores nothing.
        await expect(records.jobs.enqueue(job('dup', { kind: 'raced', storeId: 's9', activeKey: 'raced:s9' }))).rejects.toThrow();
        await records.jobs.complete(raced[0]!.id, T0 + 200);
        expect((await records.jobs.enqueue(job('after', { kind: 'raced', storeId: 's9', activeKey: 'raced:s9' }))).id).toBe('after'); // a finished one no longer holds it
        expect(await jobStates(opened)).toEqual(['after:queued', `${raced[0]!.id}:done`].sort());
      } finally {
        await other.close();
      }
    });

    test('a lease has a heartbeat: renewLease extends the lease its run holds, and answers false (nothing written) once the job is another run\'s, finished or gone; handBack ends it now, only for the run holding it', async () => {
      await open();
      await records.jobs.enqueue(job('a'));
      await records.jobs.enqueue(job('b'));
      const a = (await records.jobs.claim(T0, T0 + 100, null))!;
      expect(await records.jobs.renewLease('a', a.leaseUntil!, T0 + 150)).toBe(true);
      expect(await records.jobs.claim(T0 + 120, T0 + 220, 'b')).toMatchObject({ id: 'b' }); // renewed: a is not due at its first lease's end
      expect(await records.jobs.claim(T0 + 120, T0 + 220, null)).toBeNull();
      expect(await records.jobs.renewLease('a', a.leaseUntil!, T0 + 300)).toBe(false); // the lease it no longer holds
      // The run stops renewing (its process died): another runner takes the job once the lease ends, and the first run's heartbeat then fails.
      const taken = (await records.jobs.claim(T0 + 150, T0 + 400, null))!;
      expect(taken).toMatchObject({ id: 'a', attempts: 2, leaseUntil: T0 + 400 });
      expect(await records.jobs.renewLease('a', T0 + 150, T0 + 500)).toBe(false);
      await records.jobs.handBack('a', T0 + 150, T0 + 160); // the first run's hand-back leaves the second's lease alone
      expect(Number((await query(opened, "SELECT lease_until FROM jobs WHERE id = 'a'"))[0]!.lease_until)).toBe(T0 + 400);
      await records.jobs.handBack('a', T0 + 400, T0 + 170);
      expect(await records.jobs.claim(T0 + 170, T0 + 500, null)).toMatchObject({ id: 'a', attempts: 3 }); // handed back: due at once
      await records.jobs.complete('a', T0 + 180);
      expect(await records.jobs.renewLease('a', T0 + 500, T0 + 600)).toBe(false);
      expect(await jobStates(opened)).toEqual(['a:done', 'b:running']);
    });

    test('requeue: queued again for its time, unleased, without error; its attempts reset, kept or one uncounted (never below 0)', async () => {
      await open();
      for (const id of ['a', 'b', 'c', 'd']) await records.jobs.enqueue(job(id, { status: 'running', attempts: id === 'd' ? 0 : 3, leaseUntil: T0 + 9 }));
      await records.jobs.fail('a', 'x', T0, T0 + 1);
      await records.jobs.requeue('a', T0 + 5, 'reset');
      await records.jobs.requeue('b', T0 + 6, 'kept');
      await records.jobs.requeue('c', T0 + 7, 'uncounted');
      await records.jobs.requeue('d', T0 + 8, 'uncounted');
      const rows = (await rowsOf(opened, 'jobs')).map((row) => [row.id, row.status, Number(row.attempts), Number(row.run_at) - T0, row.lease_until, row.last_error]);
      expect(rows).toEqual([
        ['a', 'queued', 0, 5, null, null],
        ['b', 'queued', 3, 6, null, null],
        ['c', 'queued', 2, 7, null, null],
        ['d', 'queued', 0, 8, null, null],
      ]);
    });

    test('complete, fail (retried with its error, or dead once given up) and releaseLeases', async () => {
      await open();
      for (const id of ['a', 'b', 'c', 'd']) await records.jobs.enqueue(job(id, { status: 'running', attempts: 1, leaseUntil: T0 + 60_000 }));
      await records.jobs.complete('a', T0 + 1);
      await records.jobs.fail('b', 'answered 503', T0 + 2, T0 + 30_000);
      await records.jobs.fail('c', 'gave up', T0 + 3, null);
      await records.jobs.releaseLeases(T0 + 4);
      const rows = (await rowsOf(opened, 'jobs')).map((row) => [row.id, row.status, row.last_error, row.finished_at === null ? null : Number(row.finished_at) - T0, Number(row.run_at) - T0, row.lease_until === null ? null : Number(row.lease_until) - T0]);
      expect(rows).toEqual([
        ['a', 'done', null, 1, 0, null],
        ['b', 'queued', 'answered 503', null, 30_000, null],
        ['c', 'dead', 'gave up', 3, 0, null],
        ['d', 'running', null, null, 0, 4],
      ]);
    });

    test('nextRetry: of the store\'s queued jobs of those kinds that failed an attempt, the one due first; null when none waits', async () => {
      await open();
      await records.jobs.enqueue(job('a', { kind: 'sync', attempts: 2, runAt: T0 + 50 }));
      await records.jobs.enqueue(job('b', { kind: 'sync', attempts: 1, runAt: T0 + 20 }));
      await records.jobs.enqueue(job('c', { kind: 'sync', attempts: 0, runAt: T0 + 10 }));
      await records.jobs.enqueue(job('d', { kind: 'fetch', attempts: 3, runAt: T0 + 5 }));
      await records.jobs.enqueue(job('e', { kind: 'sync', attempts: 3, runAt: T0 + 1, storeId: 's2' }));
      await records.jobs.enqueue(job('f', { kind: 'sync', attempts: 3, runAt: T0 + 1, status: 'running' }));
      expect(await records.jobs.nextRetry('s1', ['sync'])).toEqual({ attempts: 1, runAt: T0 + 20 });
      expect(await records.jobs.nextRetry('s1', ['sync', 'fetch'])).toEqual({ attempts: 3, runAt: T0 + 5 });
      expect(await records.jobs.nextRetry('s1', ['other'])).toBeNull();
      expect(await records.jobs.nextRetry('s1', [])).toBeNull();
    });

    test('hasUnfinished: whether the store has a queued or running job of those kinds; finished ones and other stores\' do not count', async () => {
      await open();
      for (const [id, kind, status, storeId] of [['a', 'connect', 'done', 's1'], ['b', 'connect', 'dead', 's1'], ['c', 'connect', 'queued', 's2'], ['d', 'sync', 'running', 's1']] as const) {
        await records.jobs.enqueue(job(id, { kind, status, storeId }));
      }
      expect(await records.jobs.hasUnfinished('s1', ['connect'])).toBe(false);
      expect(await records.jobs.hasUnfinished('s1', ['connect', 'sync'])).toBe(true);
      expect(await records.jobs.hasUnfinished('s2', ['connect'])).toBe(true);
      expect(await records.jobs.hasUnfinished('s1', [])).toBe(false);
      await records.jobs.enqueue(job('e', { kind: 'connect', status: 'queued', storeId: 's1' }));
      expect(await records.jobs.hasUnfinished('s1', ['connect'])).toBe(true);
    });

    test('dropUnfinished deletes the store\'s queued and running jobs (of those kinds, or all), never finished ones nor other stores\'; how many', async () => {
      await open();
      for (const [id, kind, status, storeId] of [['a', 'sync', 'queued', 's1'], ['b', 'fetch', 'running', 's1'], ['c', 'sync', 'done', 's1'], ['d', 'sync', 'dead', 's1'], ['e', 'sync', 'queued', 's2']] as const) {
        await records.jobs.enqueue(job(id, { kind, status, storeId }));
      }
      expect(await records.jobs.dropUnfinished('s1', ['sync'])).toBe(1);
      expect(await records.jobs.dropUnfinished('s1', null)).toBe(1);
      expect(await records.jobs.dropUnfinished('s1', null)).toBe(0);
      expect(await jobStates(opened)).toEqual(['c:done', 'd:dead', 'e:queued']);
    });
  });

  describe('delivery records (the group commit)', () => {
    const logged = async () => (await query(opened, 'SELECT id, store_id AS store, topic, dedupe_key AS key, product_id AS product, outcome, reason, duplicates FROM webhook_deliveries ORDER BY id')).map((row): Record<string, unknown> => ({ ...row, duplicates: Number(row.duplicates) }));

    test('a group commits each delivery with its effect and its log row, in order, and answers what each came to', async () => {
      await open();
      const group = [
        delivery('s1', { kind: 'upsert', currency: 'EUR', ...prepared(product('101', T0 + 10)) }),
        delivery('s1', { kind: 'upsert', currency: 'EUR', ...prepared(product('101', T0 + 5)) }),
        delivery('s1', { kind: 'remove', productId: '102', removedAt: T0 }),
        delivery('s1', { kind: 'enqueue', job: 'platform-c.fetch-product', payload: { productId: '103' }, productId: '103' }),
        delivery('s1', { kind: 'order', orderId: '9001', status: 'paid' }, { topic: 'order.updated' }),
        delivery('s1', { kind: 'privacy' }, { topic: 'customers/redact' }),
        delivery('s1', { kind: 'ignore', outcome: 'ignored_topic' }, { topic: 'coupon.created' }),
        delivery('s1', { kind: 'refuse', reason: 'body_not_for_topic' }),
      ];
      const slice = sliceOf();
      expect(await records.deliveries.commitGroup(group, slice)).toEqual([
        { outcome: 'applied' },
        { outcome: 'stale' },
        { outcome: 'removed' },
        { outcome: 'queued' },
        { outcome: 'recorded' },
        { outcome: 'acknowledged' },
        { outcome: 'ignored_topic' },
        { outcome: 'refused', reason: 'body_not_for_topic' },
      ]);
      expect(slice.started).toBe(1);
      expect((await records.products.get('s1', '101'))!.platformUpdatedAt).toBe(T0 + 10);
      expect(await records.products.get('s1', '102')).toBeNull();
      expect((await query(opened, 'SELECT kind, store_id AS store, payload FROM jobs')).map((row) => [row.kind, row.store, JSON.parse(String(row.payload))])).toEqual([['platform-c.fetch-product', 's1', { productId: '103' }]]);
      expect(await query(opened, 'SELECT store_id AS store, topic, order_id AS "order", status FROM order_signals')).toEqual([{ store: 's1', topic: 'order.updated', order: '9001', status: 'paid' }]);
      expect(await eventsOf(opened, 's1')).toEqual(['customers/redact']);
      const log = await logged();
      expect(log.map((row) => [row.id, row.outcome, row.product, row.key])).toEqual(group.map((sent, i) => [sent.id, ['applied', 'stale', 'removed', 'queued', 'recorded', 'acknowledged', 'ignored_topic', 'refused'][i], ['101', '101', '102', '103'][i] ?? null, i === 7 ? null : sent.dedupeKey]));
      expect(log[7]!.reason).toBe('body_not_for_topic');
    });

    test('a delivery whose key is logged already is only counted as a duplicate; a keyless removal is keyed by the version of the product it removes', async () => {
      await open();
      await records.deliveries.commitGroup([delivery('s1', { kind: 'order', orderId: '1', status: null }, { dedupeKey: 'event:1' })], sliceOf());
      const again = await records.deliveries.commitGroup([delivery('s1', { kind: 'order', orderId: '1', status: null }, { dedupeKey: 'event:1' }), delivery('s2', { kind: 'order', orderId: '2', status: null }, { dedupeKey: 'event:1' })], sliceOf());
      expect(again).toEqual([{ outcome: 'duplicate' }, { outcome: 'recorded' }]);
      expect(await countOf(opened, 'order_signals')).toBe(2);
      await records.products.upsert('s1', null, product('101', T0 + 7), { known: null }, T0);
      const removal = (at: number) => delivery('s1', { kind: 'remove', productId: '101', removedAt: at }, { dedupeKey: null, keyedRemovalOf: '101' });
      expect(await records.deliveries.commitGroup([removal(T0 + 8), removal(T0 + 9)], sliceOf())).toEqual([{ outcome: 'removed' }, { outcome: 'duplicate' }]);
      const log = await logged();
      expect(log.map((row) => [row.key, row.duplicates])).toEqual([['event:1', 1], ['event:1', 0], [`removal:101:${T0 + 7}`, 1]]);
      // The tombstone keeps the version it removed: a later removal of it is a duplicate too. A product svc never held: 'none'.
      expect(await records.deliveries.commitGroup([removal(T0 + 20), delivery('s1', { kind: 'remove', productId: '999', removedAt: T0 }, { dedupeKey: null, keyedRemovalOf: '999' })], sliceOf())).toEqual([{ outcome: 'duplicate' }, { outcome: 'removed' }]);
      expect((await logged()).slice(2).map((row) => [row.key, row.duplicates])).toEqual([[`removal:101:${T0 + 7}`, 2], ['removal:999:none', 0]]);
    });

    test("a store sharing svc's app secret is refused a product or order another such store holds (logged without its key); other stores are not", async () => {
      await open();
      for (const id of ['a1', 'a2']) await records.stores.add(store(id, { platform: 'platform-a', platformRef: `${id}.myplatform-a.com`, credentialKind: 'via-app', webhookSecret: null }));
      await records.deliveries.commitGroup([delivery('a1', { kind: 'upsert', currency: null, ...prepared(product('101', T0)) }), delivery('a1', { kind: 'order', orderId: '7', status: null })], sliceOf());
      const shared = { sharesAppSecret: true, platform: 'platform-a' as const };
      const answers = await records.deliveries.commitGroup(
        [
          delivery('a2', { kind: 'upsert', currency: null, ...prepared(product('101', T0 + 1)) }, shared),
          delivery('a2', { kind: 'remove', productId: '101', removedAt: T0 + 1 }, shared),
          delivery('a2', { kind: 'order', orderId: '7', status: null }, shared),
          delivery('a2', { kind: 'upsert', currency: null, ...prepared(product('102', T0)) }, shared),
          delivery('s1', { kind: 'upsert', currency: null, ...prepared(product('101', T0)) }),
        ],
        sliceOf(),
      );
      expect(answers).toEqual([
        { outcome: 'refused', reason: 'held_by_other_store' },
        { outcome: 'refused', reason: 'held_by_other_store' },
        { outcome: 'refused', reason: 'held_by_other_store' },
        { outcome: 'applied' },
        { outcome: 'applied' },
      ]);
      expect(await records.products.get('a2', '101')).toBeNull();
      expect((await logged()).slice(2, 5).map((row) => [row.key, row.product])).toEqual([[null, '101'], [null, '101'], [null, null]]);
    });

    test('after a store\'s uninstall in a group, its later deliveries there are ignored as for any inactive store, but privacy requests and refusals', async () => {
      await open();
      const answers = await records.deliveries.commitGroup(
        [
          delivery('s1', { kind: 'deactivate' }, { topic: 'app/uninstalled' }),
          delivery('s1', { kind: 'upsert', currency: null, ...prepared(product('101', T0)) }),
          delivery('s1', { kind: 'remove', productId: '102', removedAt: T0 }, { dedupeKey: null, keyedRemovalOf: '102' }),
          delivery('s1', { kind: 'privacy' }, { topic: 'shop/redact' }),
          delivery('s1', { kind: 'refuse', reason: 'other_shop' }),
          delivery('s2', { kind: 'upsert', currency: null, ...prepared(product('101', T0)) }),
        ],
        sliceOf(),
      );
      expect(answers.map((answer) => answer.outcome)).toEqual(['deactivated', 'ignored_inactive', 'ignored_inactive', 'acknowledged', 'refused', 'applied']);
      expect(await records.stores.byId('s1')).toMatchObject({ status: 'inactive', signalsWithdrawnAt: T0 });
      expect(await eventsOf(opened, 's1')).toEqual(['app_uninstalled', 'shop/redact', 'signals_withdrawn']);
      expect(await records.products.get('s1', '101')).toBeNull();
      expect((await logged())[2]!.key).toBeNull();
    });

    test('the slice is started as the group begins and asked before each delivery: the deliveries it did not take are not written', async () => {
      await open();
      const group = [1, 2, 3].map((n) => delivery('s1', { kind: 'order', orderId: String(n), status: null }));
      expect(await records.deliveries.commitGroup(group, sliceOf(2))).toEqual([{ outcome: 'recorded' }, { outcome: 'recorded' }]);
      expect((await logged()).map((row) => row.id)).toEqual([group[0]!.id, group[1]!.id]);
    });

    test('a delivery whose writes fail rejects the group with EntryFailed (its index) and leaves nothing of the group', async () => {
      await open();
      const group = [
        delivery('s1', { kind: 'order', orderId: '1', status: null }),
        delivery('s1', { kind: 'upsert', currency: null, ...prepared(product('101', T0)) }),
        delivery('no-such-store', { kind: 'upsert', currency: null, ...prepared(product('102', T0)) }),
        delivery('s1', { kind: 'privacy' }),
      ];
      const failure = await records.deliveries.commitGroup(group, sliceOf()).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(EntryFailed);
      expect((failure as EntryFailed).index).toBe(2);
      for (const table of ['webhook_deliveries', 'order_signals', 'products', 'store_events']) expect(await countOf(opened, table)).toBe(0);
    });

    test('settle, duplicatesOf; applyRemoval removes with the delivery\'s outcome in one transaction; refuseRemoval gives the key back, unless a duplicate arrived since', async () => {
      await open();
      await records.products.upsert('s1', null, product('101', T0), { known: null }, T0);
      const removal = delivery('s1', { kind: 'enqueue', job: 'product.confirm-removal', payload: {}, productId: '101' }, { dedupeKey: 'event:rm' });
      await records.deliveries.commitGroup([removal], sliceOf());
      expect(await records.deliveries.duplicatesOf(removal.id)).toBe(0);
      expect(await records.deliveries.duplicatesOf('nope')).toBe(0);
      await records.deliveries.commitGroup([delivery('s1', { kind: 'ignore', outcome: 'ignored_topic' }, { dedupeKey: 'event:rm' })], sliceOf());
      expect(await records.deliveries.duplicatesOf(removal.id)).toBe(1);
      expect(await records.deliveries.refuseRemoval(removal.id, 0)).toBe(false);
      expect((await logged())[0]).toMatchObject({ outcome: 'queued', key: 'event:rm' });
      expect(await records.deliveries.refuseRemoval(removal.id, 1)).toBe(true);
      expect((await logged())[0]).toMatchObject({ outcome: 'refused', reason: 'product_not_removed', key: null });
      expect(await records.deliveries.applyRemoval(removal.id, 's1', '101', T0 + 1, true, T0 + 2)).toBe('removed');
      expect((await logged())[0]).toMatchObject({ outcome: 'removed', reason: null });
      expect(await records.deliveries.applyRemoval(removal.id, 's1', '101', T0 + 3, false, T0 + 3)).toBe('stale');
      await records.deliveries.settle(removal.id, 'ignored_inactive', null);
      expect((await logged())[0]).toMatchObject({ outcome: 'ignored_inactive' });
    });
  });

  describe('an atomic method whose write fails half-way leaves nothing of it', () => {
    const allJobs = { products: 'catalog-sync.products', categories: 'catalog-sync.categories', pages: 'catalog-sync.pages' };
    test('disconnect and deactivate (their store events refused): the store as it was', async () => {
      await open();
      await failWrites(opened, 'INSERT', 'store_events');
      await expect(records.stores.disconnect('s1', T0 + 1)).rejects.toThrow();
      await expect(records.stores.deactivate('s1', T0 + 1)).rejects.toThrow();
      expect(await records.stores.byId('s1')).toEqual(store('s1'));
    });

    test('stop (its jobs not deletable): the store active, its pass running, its jobs kept', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: 'catalog-sync.products' }], T0);
      await failWrites(opened, 'DELETE', 'jobs');
      await expect(records.stores.stop('s1', 'removing', T0 + 1)).rejects.toThrow();
      expect(await records.stores.byId('s1')).toEqual(store('s1'));
      expect(await records.syncs.get('s1', 'products')).toMatchObject({ status: 'running', error: null });
      expect(await countOf(opened, 'jobs')).toBe(1);
    });

    test('removeAll (the store row not deletable, the last delete): every row of the store kept', async () => {
      await open();
      await records.products.upsert('s1', null, product('101', T0), { known: null }, T0);
      await records.deliveries.commitGroup([delivery('s1', { kind: 'privacy' })], sliceOf());
      await failWrites(opened, 'DELETE', 'stores');
      await expect(records.stores.removeAll('s1')).rejects.toThrow();
      expect(await records.stores.holdings('s1')).toMatchObject({ products: 1, deliveries: 1, storeEvents: 1 });
    });

    test('finishDisconnect (its jobs not deletable): the hooks as they were', async () => {
      await open();
      await records.jobs.enqueue(job('j1'));
      await failWrites(opened, 'DELETE', 'jobs');
      await expect(records.stores.finishDisconnect('s1', { hookStatus: 'unregistered' }, T0 + 1)).rejects.toThrow();
      expect(await records.stores.byId('s1')).toEqual(store('s1'));
    });

    test('begin, pause and resume (their jobs refused): no pass begun, not paused, still paused', async () => {
      await open();
      await records.jobs.enqueue(job('j1', { kind: 'catalog-sync.pages' }));
      await failWrites(opened, 'INSERT', 'jobs');
      await failWrites(opened, 'DELETE', 'jobs');
      await expect(records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: 'catalog-sync.products' }], T0)).rejects.toThrow();
      expect(await records.syncs.get('s1', 'products')).toBeNull();
      await expect(records.syncs.pause('s1', Object.values(allJobs), T0)).rejects.toThrow();
      expect((await records.stores.byId('s1'))!.syncPausedAt).toBeNull();
      await query(opened, 'UPDATE stores SET sync_paused_at = ? WHERE id = ?', T0, 's2');
      await query(opened, "INSERT INTO catalog_syncs (store_id, kind, run_id, trigger, status, started_at) VALUES ('s2', 'pages', 'r9', 'manual', 'running', ?)", T0);
      await expect(records.syncs.resume('s2', allJobs, T0)).rejects.toThrow();
      expect((await records.stores.byId('s2'))!.syncPausedAt).toBe(T0);
    });

    test('sweepStep and sweptThrough (the pass not writable): nothing removed', async () => {
      await open();
      await records.syncs.begin('s1', 'manual', [{ kind: 'products', runId: 'r1', failed: null, job: null }], T0 + 100);
      await records.products.upsert('s1', null, product('101', T0), { known: null }, T0);
      await failWrites(opened, 'UPDATE', 'catalog_syncs');
      await expect(records.syncs.sweepStep({ storeId: 's1', kind: 'products', runId: 'r1' }, T0 + 100, { kind: 'products' }, '', 10, true, T0 + 200)).rejects.toThrow();
      await expect(records.syncs.sweptThrough({ storeId: 's1', kind: 'products', runId: 'r1' }, { kind: 'products' }, ['101'], null, T0 + 200)).rejects.toThrow();
      expect(await records.products.get('s1', '101')).not.toBeNull();
    });

    test('applyRemoval (its delivery not writable): the product not removed', async () => {
      await open();
      await records.products.upsert('s1', null, product('101', T0), { known: null }, T0);
      const removal = delivery('s1', { kind: 'enqueue', job: 'product.confirm-removal', payload: {}, productId: '101' });
      await records.deliveries.commitGroup([removal], sliceOf());
      await failWrites(opened, 'UPDATE', 'webhook_deliveries');
      await expect(records.deliveries.applyRemoval(removal.id, 's1', '101', T0 + 1, true, T0 + 1)).rejects.toThrow();
      expect(await records.products.get('s1', '101')).not.toBeNull();
    });
  });

  describe('platform C\'s creation-ping window, in the database', () => {
    const confirmedAt = async (id: string) => (await records.stores.byId(id))!.hooksConfirmedAt;

    test('confirmPing confirms the hooks at the ping\'s time only within the store\'s window (from its opening, until before its close); false and nothing written otherwise; a window opened again replaces it; none for an unknown store', async () => {
      await open();
      expect(await records.stores.confirmPing('s1', T0)).toBe(false); // never opened
      await records.stores.openPingWindow('s1', T0 + 10, T0 + 20);
      expect(await records.stores.confirmPing('s1', T0 + 9)).toBe(false); // before it opened (a clock set back)
      expect(await records.stores.confirmPing('s1', T0 + 20)).toBe(false); // closed
      expect(await records.stores.confirmPing('s2', T0 + 15)).toBe(false); // another store's window
      expect(await confirmedAt('s1')).toBeNull();
      expect(await confirmedAt('s2')).toBeNull();
      expect(await records.stores.confirmPing('s1', T0 + 19)).toBe(true);
      expect(await confirmedAt('s1')).toBe(T0 + 19);
      await records.stores.openPingWindow('s1', T0 + 100, T0 + 200);
      expect(await records.stores.confirmPing('s1', T0 + 15)).toBe(false); // the earlier window is gone
      expect(await records.stores.confirmPing('s1', T0 + 100)).toBe(true);
      await records.stores.openPingWindow('nope', T0, T0 + 1_000);
      expect(await records.stores.confirmPing('nope', T0 + 1)).toBe(false);
      expect(await query(opened, 'SELECT store_id FROM hook_ping_windows')).toEqual([{ store_id: 's1' }]);
      await records.stores.removeAll('s1'); // removed with its store
      expect(await query(opened, 'SELECT store_id FROM hook_ping_windows')).toEqual([]);
    });

    test('a window one instance opened is honoured by another sharing the database (the ping reached the other instance behind the load balancer)', async () => {
      await open();
      const other = await storageOn(opened);
      try {
        const clock = fixedClock(T0);
        const registering = createStoreRegistry(records.stores, () => '0', createSecretBox(null), clock);
        const pinged = createStoreRegistry(other.storage.stores, () => '0', createSecretBox(null), clock);
        expect(await pinged.confirmHooks('s1')).toBe(false); // not awaited by any instance
        await registering.awaitPing('s1');
        clock.advance(PING_GRACE_MS - 1);
        expect(await pinged.confirmHooks('s1')).toBe(true);
        expect(await confirmedAt('s1')).toBe(T0 + PING_GRACE_MS - 1);
        clock.advance(1);
        expect(await pinged.confirmHooks('s1')).toBe(false); // the grace is over, on every instance
        expect(await confirmedAt('s1')).toBe(T0 + PING_GRACE_MS - 1);
      } finally {
        await other.close();
      }
    });
  });

  describe('the store registry over the records (its cache)', () => {
    const registryOver = (stamp: () => string) => createStoreRegistry(records.stores, stamp, createSecretBox(null), fixedClock(T0));

    test('a store it holds answers at once, without a promise; one it must read answers with a promise; a moved stamp empties it', async () => {
      await open();
      let stamp = 0;
      const registry = registryOver(() => String(stamp));
      const first = registry.get('s1');
      expect(first).toBeInstanceOf(Promise);
      expect(await first).toEqual(store('s1'));
      expect(registry.get('s1')).toEqual(store('s1'));
      expect(registry.findByRef('platform-c', 'https://s1.example')).toBeInstanceOf(Promise);
      expect(registry.get('nope')).toBeInstanceOf(Promise);
      expect(await registry.get('nope')).toBeNull();
      expect(registry.get('nope')).toBeInstanceOf(Promise); // a miss is never kept
      stamp++;
      expect(registry.get('s1')).toBeInstanceOf(Promise);
    });

    test('a store read while the stamp moved is not kept: it may predate the write that moved it', async () => {
      await open();
      let stamp = 0;
      const registry = registryOver(() => String(stamp));
      const read = registry.get('s1');
      stamp++; // a write to the stores table while the read is under way
      void registry.get('s2'); // another lookup empties the cache under the new stamp first
      expect(await read).toEqual(store('s1'));
      expect(registry.get('s1')).toBeInstanceOf(Promise);
    });
  });

  test('platform text is stored without NUL characters (PostgreSQL refuses them in text): a delivery\'s topic, key and order status, a product\'s and a page\'s text fields', async () => {
    await open();
    const clock = fixedClock(T0);
    const catalog = createCatalog(records.products, clock);
    const s1 = (await records.stores.byId('s1'))!;
    const dispatch = createDispatcher({ deliveries: records.deliveries, clock, stores: { credentialsOf: () => ({ kind: 'via-app' }) }, catalog });
    const nul = '\u0000';
    const data = product('101', T0, { title: `Bad${nul}Title`, brand: `A${nul}cme`, variants: [{ variantId: '1', title: `S${nul}`, sku: null, barcode: null, mpn: null, price: '1.00', compareAtPrice: null, availability: null, options: {}, image: null, url: null }] });
    expect(await dispatch({ store: s1, topic: `product${nul}.updated`, dedupeKey: `key${nul}1`, event: () => ({ kind: 'product.upsert', product: data }) })).toEqual({ outcome: 'applied' });
    expect(await dispatch({ store: s1, topic: 'order.updated', dedupeKey: null, event: () => ({ kind: 'order', orderId: '5', status: `pa${nul}id` }) })).toEqual({ outcome: 'recorded' });
    const row = (await records.products.get('s1', '101'))!;
    expect([row.title, row.brand]).toEqual(['BadTitle', 'Acme']);
    expect((await records.products.variantsOf([row.id])).get(row.id)![0]!.title).toBe('S');
    expect((await query(opened, 'SELECT topic, dedupe_key AS key FROM webhook_deliveries ORDER BY topic')).map((logRow) => [logRow.topic, logRow.key])).toEqual([['order.updated', null], ['product.updated', 'key1']]);
    expect((await query(opened, 'SELECT status FROM order_signals'))[0]!.status).toBe('paid');
    await records.syncs.begin('s1', 'manual', [{ kind: 'pages', runId: 'r1', failed: null, job: null }], T0);
    const pages = entryRows('s1', 'page', [{ entryId: '7', handle: `ab${nul}out`, title: `Ab${nul}out`, url: `https://s1.example/${nul}about`, updatedAt: null }], T0, T0);
    await records.syncs.applyPage({ storeId: 's1', kind: 'pages', runId: 'r1' }, T0, { kind: 'entries', entries: pages }, null, T0);
    expect(await query(opened, 'SELECT handle, title, url FROM catalog_entries')).toEqual([{ handle: 'about', title: 'About', url: 'https://s1.example/about' }]);
  });
});
