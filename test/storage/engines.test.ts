import { afterEach, describe, expect, test } from 'bun:test';
import { ENGINES, storageOn, type OpenedEngine } from '../helpers/storage.ts';

describe.each(ENGINES)('the storage engine under test ($name)', (engine) => {
  let opened: OpenedEngine;
  afterEach(() => opened.close());

  test('opens migrated: every svc table exists and is empty', async () => {
    opened = await engine.open();
    const count = opened.kind === 'sqlite'
      ? opened.database.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM api_keys').get()!.n
      : Number((await opened.client.sql`SELECT count(*) AS n FROM api_keys`)[0].n);
    expect(count).toBe(0);
  });
});

describe.each(ENGINES)('what the storage answers ($name)', (engine) => {
  let opened: OpenedEngine;
  let instance: Awaited<ReturnType<typeof storageOn>>;
  afterEach(async () => {
    await instance.close();
    await opened.close();
  });

  /** A value, or a real Promise: never a bare thenable such as a drizzle query not yet run, which a caller going on with a value would take for the answer. */
  const isValueOrPromise = (answer: unknown) => answer instanceof Promise || typeof (answer as { then?: unknown } | null)?.then !== 'function';

  test('the hot reads and the records answer a value or a real Promise, never a query builder', async () => {
    opened = await engine.open();
    instance = await storageOn(opened);
    const { storage } = instance;
    const answers = [
      storage.hot.faqs.approved('st_none', 'product', ['tote']),
      storage.faqs.approved('st_none', 'product', ['tote']),
      storage.hot.products.refsOf('st_none', 'tote'),
      storage.hot.catalogEntries.refsOf('st_none', 'category', 'bags'),
      storage.hot.products.variantsOf(['1']),
    ];
    for (const answer of answers) expect(isValueOrPromise(answer)).toBe(true);
    expect(await Promise.all(answers)).toEqual([[], [], ['tote'], ['bags'], new Map([['1', []]])]);
  });

  test.skipIf(engine.name !== 'postgres')('every method of every records domain on PostgreSQL is an async function (so it answers a real Promise)', async () => {
    opened = await engine.open();
    instance = await storageOn(opened);
    const { storage } = instance;
    const domains = { ...storage.auth, faqs: storage.faqs, enrichments: storage.enrichments, catalogEntries: storage.catalogEntries, products: storage.products, stores: storage.stores, syncs: storage.syncs, jobs: storage.jobs, deliveries: storage.deliveries, retention: storage.retention, ...Object.fromEntries(Object.entries(storage.hot).map(([name, records]) => [`hot.${name}`, records])) };
    const plain: string[] = [];
    for (const [domain, records] of Object.entries(domains)) {
      for (const [name, member] of Object.entries(records as object)) if (typeof member === 'function' && member.constructor.name !== 'AsyncFunction') plain.push(`${domain}.${name}`);
    }
    expect(plain).toEqual([]);
  });
});
