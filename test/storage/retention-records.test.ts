// The contract of record retention's records (src/storage/retention.ts), held on every engine under
// test: each kind deletes only its own expired rows, oldest first, at most the batch's limit, and
// answers how many; finished jobs only (queued, running and retrying jobs never), unused leads only.
// The rows are written and read back with plain SQL that both engines answer alike.
import { describe, expect, test } from 'bun:test';
import { createRecordRetention } from '../../src/retention/records.ts';
import { fixedClock } from '../../src/lib/clock.ts';
import { DAY_MS } from '../../src/lib/time.ts';
import type { RetentionRecords } from '../../src/storage/retention.ts';
import { store } from '../helpers/catalog-data.ts';
import { closedAfterEachTest, ENGINES, query, type OpenedEngine } from '../helpers/storage.ts';

const { open: openEngine, storageOf } = closedAfterEachTest();

const ids = async (opened: OpenedEngine, table: string) => (await query(opened, `SELECT id FROM ${table} ORDER BY id`)).map((row) => row.id);

const addDelivery = (opened: OpenedEngine, id: string, at: number) =>
  query(opened, "INSERT INTO webhook_deliveries (id, store_id, platform, topic, outcome, received_at) VALUES (?, 's1', 'platform-c', 'product.updated', 'applied', ?)", id, at);
const addOrderSignal = (opened: OpenedEngine, id: string, at: number) => query(opened, "INSERT INTO order_signals (id, store_id, topic, order_id, received_at) VALUES (?, 's1', 'order.created', '7', ?)", id, at);
const addStoreEvent = (opened: OpenedEngine, id: string, at: number) => query(opened, "INSERT INTO store_events (id, store_id, kind, occurred_at) VALUES (?, 's1', 'disconnected', ?)", id, at);
const addJob = (opened: OpenedEngine, id: string, status: string, finishedAt: number | null) =>
  query(opened, "INSERT INTO jobs (id, kind, store_id, payload, status, attempts, run_at, created_at, finished_at) VALUES (?, 'platform-c.fetch-product', 's1', '{}', ?, 1, 0, 0, ?)", id, status, finishedAt);
const addLead = (opened: OpenedEngine, id: string, verified: boolean, firstScanAt: number | null, createdAt: number) =>
  query(opened, `INSERT INTO leads (id, email, verified, first_scan_at, created_at) VALUES (?, ?, ${verified}, ?, ?)`, id, `${id}@example.com`, firstScanAt, createdAt);

describe.each(ENGINES)('record retention records ($name)', (engine) => {
  /** The engine, and its retention records as its storage composes them. */
  async function open() {
    const opened = await openEngine(engine);
    const storage = await storageOf(opened);
    return { opened, storage, retention: storage.retention };
  }

  test('each kind deletes its rows older than the cutoff, none newer, none of another kind, and answers how many', async () => {
    const { opened, storage, retention } = await open();
    await storage.stores.add(store('s1'));
    for (const [id, at] of [['a', 100], ['b', 199], ['c', 200], ['d', 300]] as const) {
      await addDelivery(opened, id, at);
      await addOrderSignal(opened, id, at);
      await addStoreEvent(opened, id, at);
    }
    expect(await retention.deleteOldest('webhook_deliveries', 200, 10)).toBe(2);
    expect(await ids(opened, 'webhook_deliveries')).toEqual(['c', 'd']);
    expect(await ids(opened, 'order_signals')).toEqual(['a', 'b', 'c', 'd']);
    expect(await retention.deleteOldest('order_signals', 301, 10)).toBe(4);
    expect(await ids(opened, 'order_signals')).toEqual([]);
    expect(await ids(opened, 'store_events')).toEqual(['a', 'b', 'c', 'd']);
    expect(await retention.deleteOldest('store_events', 100, 10)).toBe(0);
    expect(await retention.deleteOldest('store_events', 101, 10)).toBe(1);
    expect(await ids(opened, 'store_events')).toEqual(['b', 'c', 'd']);
  });

  test('a batch deletes at most its limit, the oldest first', async () => {
    const { opened, retention } = await open();
    // Inserted out of time order: the batch follows the time, not the insertion or the id.
    for (const [id, at] of [['m', 50], ['x', 10], ['a', 40], ['k', 20], ['b', 30]] as const) await addDelivery(opened, id, at);
    expect(await retention.deleteOldest('webhook_deliveries', 1000, 2)).toBe(2);
    expect(await ids(opened, 'webhook_deliveries')).toEqual(['a', 'b', 'm']);
    expect(await retention.deleteOldest('webhook_deliveries', 1000, 2)).toBe(2);
    expect(await ids(opened, 'webhook_deliveries')).toEqual(['m']);
    expect(await retention.deleteOldest('webhook_deliveries', 1000, 2)).toBe(1);
    expect(await retention.deleteOldest('webhook_deliveries', 1000, 2)).toBe(0);
  });

  test('queued/running jobs are never deleted: only done and dead ones finished before the cutoff', async () => {
    const { opened, retention } = await open();
    await addJob(opened, 'done-old', 'done', 100);
    await addJob(opened, 'dead-old', 'dead', 150);
    await addJob(opened, 'done-new', 'done', 500);
    await addJob(opened, 'queued', 'queued', null);
    await addJob(opened, 'running', 'running', null);
    // A retry waiting for its turn is queued; one that finished before (a requeue keeps no finish time) never counts.
    await addJob(opened, 'retrying', 'queued', 50);
    await addJob(opened, 'leased', 'running', 60);
    expect(await retention.deleteOldest('finished_jobs', 1000, 100)).toBe(3);
    expect(await ids(opened, 'jobs')).toEqual(['leased', 'queued', 'retrying', 'running']);
  });

  test('unused leads only: never verified and no scan committed, created before the cutoff', async () => {
    const { opened, retention } = await open();
    await addLead(opened, 'unused-old', false, null, 100);
    await addLead(opened, 'unused-new', false, null, 900);
    await addLead(opened, 'verified', true, null, 100);
    await addLead(opened, 'scanned', false, 120, 100);
    await addLead(opened, 'verified-scanned', true, 120, 100);
    expect(await retention.deleteOldest('unused_leads', 500, 100)).toBe(1);
    expect(await ids(opened, 'leads')).toEqual(['scanned', 'unused-new', 'verified', 'verified-scanned']);
  });

  test('the periodic sweep deletes every expired record of each setting, in batches of at most batchRows', async () => {
    const { opened, retention } = await open();
    const clock = fixedClock(100 * DAY_MS);
    for (let i = 0; i < 5; i++) await addDelivery(opened, `old-${i}`, 60 * DAY_MS + i);
    await addDelivery(opened, 'recent', 95 * DAY_MS);
    await addLead(opened, 'unused-old', false, null, 10 * DAY_MS);
    const limits: number[] = [];
    const counted: RetentionRecords = {
      deleteOldest: async (kind, cutoff, limit) => {
        limits.push(limit);
        return retention.deleteOldest(kind, cutoff, limit);
      },
    };
    const days = { webhookDeliveryDays: 30, jobDays: 0, storeEventDays: 0, orderSignalDays: 0, unusedLeadDays: 30 };
    expect(await createRecordRetention(counted, clock, days, { batchRows: 2 }).runOnce()).toBe(6);
    expect(await ids(opened, 'webhook_deliveries')).toEqual(['recent']);
    expect(await ids(opened, 'leads')).toEqual([]);
    expect(Math.max(...limits)).toBe(2);
  });
});
