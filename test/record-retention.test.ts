import { afterEach, describe, expect, test } from 'bun:test';
import { createRecordRetention, type RecordRetentionOptions } from '../src/retention/records.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { platformAProduct } from './fakes/payloads.ts';
import { jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { testSqliteOnly } from './helpers/engine.ts';
import { TELEMETRY, scanPayload, tokenInit } from './helpers/probe.ts';
import { seedStore, signedPlatformADelivery } from './helpers/signals.ts';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const APP_SECRET = 'svc-app-secret';
const SHOP = 'acme.myplatform-a.com';
const WINDOWS = {
  SVC_WEBHOOK_DELIVERY_RETENTION_DAYS: '30',
  SVC_JOB_RETENTION_DAYS: '20',
  SVC_STORE_EVENT_RETENTION_DAYS: '365',
  SVC_ORDER_SIGNAL_RETENTION_DAYS: '90',
  SVC_UNUSED_LEAD_RETENTION_DAYS: '10',
};

let t: TestApp;
afterEach(() => t?.close());
const clock = fixedClock(T0);

async function app(env: Record<string, string> = WINDOWS) {
  clock.set(T0);
  t = await makeTestApp({ clock, env: { SVC_PLATFORM_A_APP_SECRET: APP_SECRET, SVC_RATE_ANONYMOUS: '1000', ...env } });
  return seedStore(t, 'platform-a', SHOP);
}
/** The app's record retention, as the server runs it. */
const recordRetention = (options?: RecordRetentionOptions) => createRecordRetention(t.storage.retention, clock, t.config.retention, options);
/** The table's rows (on SQLite counted within the call, before it yields). */
const count = async (table: string) => Number((await t.query(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
const counts = (...tables: string[]) => Promise.all(tables.map((table) => count(table)));

let orderId = 1;
/** One verified delivery of each kind: a product update, an order and a privacy request (a store event). */
async function deliveries() {
  for (const [topic, payload] of [
    ['products/update', platformAProduct(orderId)],
    ['orders/create', { id: orderId++, financial_status: 'paid', line_items: [] }],
    ['customers/redact', { shop_domain: SHOP, customer: { id: 1 } }],
  ] as const) {
    expect((await t.request('/api/v1/webhooks/platform-a', signedPlatformADelivery(APP_SECRET, SHOP, topic, payload))).status).toBe(200);
  }
}

async function signUp(email: string): Promise<string> {
  const res = await t.request('/api/v1/public/leads', jsonRequest('POST', { email }));
  expect(res.status).toBe(201);
  return (await res.json()).apiToken;
}

describe('record retention (SVC_*_RETENTION_DAYS)', () => {
  test('webhook deliveries, order signals and store events older than their windows are deleted, newer ones kept', async () => {
    await app();
    const retention = recordRetention();
    await deliveries();
    clock.advance(29 * DAY);
    await deliveries();
    clock.advance(2 * DAY); // the first deliveries are 31 days old, the second 2
    await retention.runOnce();
    expect(await counts('webhook_deliveries', 'order_signals', 'store_events')).toEqual([3, 2, 2]);

    clock.set(T0 + 91 * DAY);
    await retention.runOnce();
    expect(await counts('webhook_deliveries', 'order_signals', 'store_events')).toEqual([0, 1, 2]);
    clock.set(T0 + 366 * DAY);
    await retention.runOnce();
    expect(await counts('webhook_deliveries', 'order_signals', 'store_events')).toEqual([0, 0, 1]);
  });

  test('only finished and dead jobs older than the window are deleted; queued, running and retrying jobs never', async () => {
    const storeId = await app();
    const queue = t.webhooks.queue;
    const done = await queue.enqueue('platform-b.fetch-product', storeId, { productId: '1' });
    await queue.complete(done.id);
    const dead = await queue.enqueue('platform-b.fetch-product', storeId, { productId: '2' });
    await t.query("UPDATE jobs SET attempts = 12, status = 'running' WHERE id = ?", dead.id);
    await queue.fail({ ...dead, attempts: 12 }, 'gave up');
    const retrying = await queue.enqueue('platform-b.fetch-product', storeId, { productId: '3' });
    await queue.fail({ ...retrying, attempts: 1 }, 'try again');
    await queue.enqueue('platform-b.fetch-product', storeId, { productId: '4' }); // queued
    const running = await queue.enqueue('platform-b.fetch-product', storeId, { productId: '5' });
    await t.query("UPDATE jobs SET status = 'running', lease_until = ? WHERE id = ?", T0 + 60_000, running.id);
    clock.advance(19 * DAY);
    const recent = await queue.enqueue('platform-b.fetch-product', storeId, { productId: '6' });
    await queue.complete(recent.id);

    clock.set(T0 + 21 * DAY); // two jobs finished 21 days ago, one 2 days ago; the unfinished ones are 21 days old
    expect(await recordRetention().runOnce()).toBe(2);
    const jobs = (await t.query('SELECT payload, status FROM jobs')).map((job) => ({ id: (JSON.parse(String(job.payload)) as { productId: string }).productId, status: job.status }));
    expect(jobs.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: '3', status: 'queued' },
      { id: '4', status: 'queued' },
      { id: '5', status: 'running' },
      { id: '6', status: 'done' },
    ]);
  });

  test('unverified leads that never sent a scan are deleted after the window; verified leads and leads that scanned are kept', async () => {
    await app();
    await signUp('unused@example.com');
    const scanned = await signUp('scanner@example.com');
    expect((await t.request(TELEMETRY, tokenInit(scanned, scanPayload()))).status).toBe(204);
    await signUp('verified@example.com');
    const [verified] = await t.query("SELECT id FROM leads WHERE email = 'verified@example.com'");
    expect(await t.leads.verify(String(verified!.id))).not.toBeNull();
    clock.advance(9 * DAY);
    await signUp('recent@example.com');

    clock.advance(2 * DAY); // the first three are 11 days old, the last 2
    expect(await recordRetention().runOnce()).toBe(1);
    const left = (await t.query('SELECT email FROM leads ORDER BY email')).map((row) => row.email);
    expect(left).toEqual(['recent@example.com', 'scanner@example.com', 'verified@example.com']);
    // The lead that scanned still authenticates.
    expect((await t.request(TELEMETRY, tokenInit(scanned, scanPayload()))).status).toBe(204);
  });

  test('a window of 0 keeps its records forever', async () => {
    await app({ SVC_WEBHOOK_DELIVERY_RETENTION_DAYS: '0', SVC_ORDER_SIGNAL_RETENTION_DAYS: '0', SVC_STORE_EVENT_RETENTION_DAYS: '0', SVC_UNUSED_LEAD_RETENTION_DAYS: '0' });
    await deliveries();
    await signUp('unused@example.com');
    clock.advance(10_000 * DAY);
    expect(await recordRetention().runOnce()).toBe(0);
    expect(await counts('webhook_deliveries', 'order_signals', 'store_events', 'leads')).toEqual([3, 1, 1, 1]);
  });

  test('the defaults keep deliveries and finished jobs 30 days, order signals 90, store events 365, unused sign-ups 30', async () => {
    await app({});
    expect(t.config.retention).toEqual({ webhookDeliveryDays: 30, jobDays: 30, storeEventDays: 365, orderSignalDays: 90, unusedLeadDays: 30 });
  });

  testSqliteOnly("SQLite deletes a batch within the call, so the sweep must yield between batches for requests to be served; PostgreSQL's batches wait for the database anyway", 'deletes in small batches with a turn of the event loop between them, so requests are served meanwhile', async () => {
    await app();
    for (let i = 0; i < 3; i++) await deliveries(); // 9 delivery rows
    clock.advance(31 * DAY);
    const sweep = recordRetention({ batchRows: 2 }).runOnce();
    expect(await count('webhook_deliveries')).toBe(7); // only the first batch ran before the sweep yielded
    await deliveries(); // a delivery commits in between
    await sweep;
    expect(await count('webhook_deliveries')).toBe(3);
  });
});
