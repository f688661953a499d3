import { describe, expect, test } from 'bun:test';
import { createKeyStore } from '../../src/auth/keys.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createWebhookServices } from '../../src/webhooks/services.ts';
import { groupSlice } from '../../src/lib/group-commit.ts';
import type { DeliveryEffect } from '../../src/webhooks/deliveries.ts';
import { changesHeardBy } from '../helpers/app.ts';
import { product, store, T0 } from '../helpers/catalog-data.ts';
import { closedAfterEachTest, ENGINES } from '../helpers/storage.ts';

const { open, storageOf } = closedAfterEachTest();

describe.each(ENGINES)('the storage ($name)', (engine) => {
  test('every records method answers with its value or a real Promise, never another thenable (a drizzle query): callers on the hot GETs tell a late answer by instanceof Promise', async () => {
    const storage = await storageOf(await open(engine));
    const { engine: _engine, changes: _changes, scans, hot, ...domains } = storage;
    const records: [string, object][] = [...Object.entries(domains), ...Object.entries(scans).map(([name, part]): [string, object] => [`scans.${name}`, part]), ...Object.entries(hot).map(([name, part]): [string, object] => [`hot.${name}`, part])];
    const thenables: string[] = [];
    for (const [domain, methods] of records) {
      for (const [name, method] of Object.entries(methods)) {
        if (typeof method !== 'function') continue;
        let answer: unknown;
        try {
          // Called with no arguments on an empty database: only the kind of answer matters here.
          answer = method.call(methods);
        } catch {
          continue;
        }
        if (typeof (answer as { then?: unknown } | null)?.then === 'function' && !(answer instanceof Promise)) thenables.push(`${domain}.${name}`);
        await Promise.resolve(answer).catch(() => undefined);
      }
    }
    expect(thenables).toEqual([]);
  });

  test('a key revoked through it is refused at once by the keys store in front of it (its cache moves with the write)', async () => {
    const storage = await storageOf(await open(engine));
    const keys = createKeyStore(storage.auth, storage.changes, systemClock);
    const { key, record } = await keys.create({ scopes: ['admin'], name: 'ops' });
    expect((await keys.verify(key))?.id).toBe(record.id);
    // Verified: answered from memory, without a promise (on PostgreSQL once the create's own
    // notification has come in and emptied the cache one more time).
    let cached = keys.verify(key);
    for (let tries = 0; cached instanceof Promise && tries < 50; tries++) {
      await cached;
      await Bun.sleep(20);
      cached = keys.verify(key);
    }
    expect(cached).not.toBeInstanceOf(Promise);
    await keys.revoke(record.id);
    expect(await keys.verify(key)).toBeNull();
  });

  test("this process's own revoke moves its cache by itself, without waiting for any notification", async () => {
    const opened = await open(engine);
    // On PostgreSQL the change feed would also hear the revoke's notification: without its trigger it hears nothing.
    if (opened.kind === 'postgres') await opened.client.sql`DROP TRIGGER api_keys_changes ON api_keys`;
    const storage = await storageOf(opened);
    const keys = createKeyStore(storage.auth, storage.changes, systemClock);
    const { key, record } = await keys.create({ scopes: ['admin'], name: 'ops' });
    expect((await keys.verify(key))?.id).toBe(record.id);
    await keys.revoke(record.id);
    expect(await keys.verify(key)).toBeNull();
  });

  test('a key revoked through another instance on the same database is refused within a second', async () => {
    const opened = await open(engine);
    const [here, there] = [await storageOf(opened), await storageOf(opened)];
    const keysHere = createKeyStore(here.auth, here.changes, systemClock);
    const keysThere = createKeyStore(there.auth, there.changes, systemClock);
    const { key, record } = await keysThere.create({ scopes: ['admin'], name: 'ops' });
    expect((await keysHere.verify(key))?.id).toBe(record.id);
    await keysThere.revoke(record.id);
    let refused = false;
    for (let waited = 0; waited <= 1000 && !refused; waited += 20) {
      refused = (await keysHere.verify(key)) === null;
      if (!refused) await Bun.sleep(20);
    }
    expect(refused).toBe(true);
  });

  test("a delivery group moves the change stamps of the tables its deliveries wrote and no other: product updates keep the store registry's and the job runner's", async () => {
    const opened = await open(engine);
    const storage = await storageOf(opened);
    await storage.stores.add(store('s1'));
    // The store's notification first: it moves the stores' stamp whenever it arrives.
    if (opened.kind === 'postgres') await changesHeardBy(storage.changes, opened.client.sql);
    const stamps = Object.fromEntries(['stores', 'jobs', 'products', 'webhook_deliveries', 'order_signals'].map((table) => [table, storage.changes.tableStamp([table])]));
    const read = () => Object.fromEntries(Object.entries(stamps).map(([table, stamp]) => [table, stamp()]));
    let delivered = 0;
    const commit = async (...effects: DeliveryEffect[]) => {
      const slice = groupSlice();
      slice.floor = effects.length;
      const group = effects.map((effect) => ({ id: `d${++delivered}`, storeId: 's1', platform: 'platform-c' as const, topic: 'product.updated', dedupeKey: `k${delivered}`, keyedRemovalOf: null, sharesAppSecret: false, effect, at: T0 }));
      await storage.deliveries.commitGroup(group, slice);
    };
    const before = read();
    await commit({ kind: 'upsert', currency: null, product: product('101', T0), description: { known: null } }, { kind: 'remove', productId: '102', removedAt: T0 });
    const after = read();
    expect(after.stores).toBe(before.stores);
    expect(after.jobs).toBe(before.jobs);
    expect(after.order_signals).toBe(before.order_signals);
    expect(after.products).not.toBe(before.products);
    expect(after.webhook_deliveries).not.toBe(before.webhook_deliveries);
    await commit({ kind: 'deactivate' }, { kind: 'enqueue', job: 'platform-c.fetch-product', payload: {}, productId: '103' });
    const deactivated = read();
    expect(deactivated.stores).not.toBe(after.stores);
    expect(deactivated.order_signals).toBe(after.order_signals);
  });

  test('the stores domain runs on it: a store created through the webhook services is found, and a write through the storage is seen at once by their registry', async () => {
    const opened = await open(engine);
    // Without its trigger, the feed hears nothing of the stores table: only the write's own announcement moves the stamp.
    if (opened.kind === 'postgres') await opened.client.sql`DROP TRIGGER stores_changes ON stores`;
    const storage = await storageOf(opened);
    const services = createWebhookServices(storage, loadConfig({ 'data-dir': '/nonexistent' }, {}), systemClock);
    const credentials = { kind: 'rest-keys' as const, siteUrl: 'https://shop.example', consumerKey: 'ck', consumerSecret: 'cs' };
    const created = await services.stores.create({ platform: 'platform-c', domain: 'shop.example', currency: 'EUR', parsed: { credentials, platformRef: 'https://shop.example' } });
    expect((await services.stores.get(created!.id))?.currency).toBe('EUR');
    expect(services.stores.get(created!.id)).not.toBeInstanceOf(Promise); // kept in memory
    await storage.stores.setCurrency(created!.id, 'USD', Date.now());
    expect((await services.stores.get(created!.id))?.currency).toBe('USD');
    const job = await services.queue.enqueue('platform-c.fetch-product', created!.id, { productId: '1' });
    expect((await storage.jobs.claim(Date.now() + 1000, Date.now() + 60_000, null))?.id).toBe(job.id);
  });
});
