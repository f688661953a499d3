// The content records' contract (src/storage/content.ts), held on every engine under test: FAQs,
// enrichment, categories and pages, and products with their ordering rule. Each test opens a
// migrated, empty engine; what no record method reads back (the FAQ change stamps) is read with
// plain SQL that both engines answer alike.
import { afterEach, describe, expect, test } from 'bun:test';
import type { CatalogEntry } from '../../src/catalog/entries.ts';
import type { CatalogEntryType, EntryData } from '../../src/catalog/entry-data.ts';
import type { DescriptionText, StoredDescription } from '../../src/catalog/products.ts';
import type { FaqEntry } from '../../src/faqs/store.ts';
import type { CatalogEntryRecords, EnrichmentRecords, FaqRecords, ProductRecords } from '../../src/storage/content.ts';
import { postgresCatalogEntryRecords, postgresProductRecords } from '../../src/storage/postgres/catalog.ts';
import { postgresEnrichmentRecords, postgresFaqRecords } from '../../src/storage/postgres/content.ts';
import { sqliteCatalogEntryRecords, sqliteProductRecords } from '../../src/storage/sqlite/catalog.ts';
import { sqliteEnrichmentRecords, sqliteFaqRecords } from '../../src/storage/sqlite/content.ts';
import { product, T0, variant } from '../helpers/catalog-data.ts';
import { ENGINES, query, type OpenedEngine } from '../helpers/storage.ts';

interface ContentRecords {
  faqs: FaqRecords;
  enrichments: EnrichmentRecords;
  entries: CatalogEntryRecords;
  products: ProductRecords;
}

function recordsOf(opened: OpenedEngine): ContentRecords {
  if (opened.kind === 'sqlite') {
    const { database } = opened;
    return { faqs: sqliteFaqRecords(database), enrichments: sqliteEnrichmentRecords(database), entries: sqliteCatalogEntryRecords(database), products: sqliteProductRecords(database) };
  }
  const { client } = opened;
  return { faqs: postgresFaqRecords(client), enrichments: postgresEnrichmentRecords(client), entries: postgresCatalogEntryRecords(client), products: postgresProductRecords(client) };
}

/** A store row the content hangs off (foreign keys); stores have records of their own elsewhere. */
async function seedStore(opened: OpenedEngine, id: string): Promise<void> {
  await query(
    opened,
    `INSERT INTO stores (id, platform, domain, platform_ref, status, credential_kind, credentials, hook_status, hook_topics, settings, created_at, updated_at)
     VALUES (?, 'platform-a', ?, ?, 'active', 'via-app', '{}', 'none', '[]', '{}', 1, 1)`,
    id,
    `${id}.example`,
    `${id}.example`,
  );
}

const changeTimes = async (opened: OpenedEngine) =>
  Object.fromEntries((await query(opened, 'SELECT entity_ref AS ref, changed_at AS at FROM faq_entity_changes ORDER BY entity_ref')).map((row) => [row.ref, Number(row.at)]));


function faq(id: string, overrides: Partial<FaqEntry> = {}): FaqEntry {
  return { id, storeId: 's1', entityType: 'product', entityRef: 'p1', question: `Q ${id}?`, answer: `<p>A ${id}</p>`, position: 0, status: 'approved', createdAt: T0, updatedAt: T0, ...overrides };
}

const KNOWN: DescriptionText = { known: null };

function entry(entryId: string, overrides: Partial<EntryData> = {}): EntryData {
  return { entryId, handle: `handle-${entryId}`, title: `Entry ${entryId}`, url: `https://shop.example/pages/${entryId}`, updatedAt: null, ...overrides };
}

let rowsWritten = 0;
/** A page of entries as the catalogue writes it: new rows (ids in write order), listed by the pass started at `passStartedAt`, written at `at`. */
function listed(storeId: string, type: CatalogEntryType, entries: EntryData[], passStartedAt: number, at: number): CatalogEntry[] {
  return entries.map((e) => ({
    id: `row-${String(++rowsWritten).padStart(6, '0')}`,
    storeId,
    type,
    entryId: e.entryId,
    handle: e.handle,
    title: e.title,
    url: e.url,
    platformUpdatedAt: e.updatedAt,
    listedAt: passStartedAt,
    syncedAt: at,
    createdAt: at,
  }));
}

describe.each(ENGINES)('content records on $name', (engine) => {
  let opened: OpenedEngine;
  let records: ContentRecords;
  const open = async () => {
    opened = await engine.open();
    records = recordsOf(opened);
    await seedStore(opened, 's1');
    await seedStore(opened, 's2');
  };
  afterEach(() => opened.close());

  describe('FAQ records', () => {
    test('create stores the entry as given (times as numbers past 2^31) and stamps its entity at its updatedAt; byId finds it, null for an unknown id', async () => {
      await open();
      const created = await records.faqs.create(faq('f1'));
      expect(created).toEqual(faq('f1'));
      expect(await records.faqs.byId('f1')).toEqual(faq('f1'));
      expect(typeof (await records.faqs.byId('f1'))!.updatedAt).toBe('number');
      expect(await records.faqs.byId('nope')).toBeNull();
      expect(await changeTimes(opened)).toEqual({ p1: T0 });
    });

    test('every write moves its entity change time to its own time, or 1 ms past the previous one when that is not earlier', async () => {
      await open();
      await records.faqs.create(faq('f1'));
      await records.faqs.create(faq('f2', { updatedAt: T0 - 5 }));
      expect((await changeTimes(opened)).p1).toBe(T0 + 1);
      await records.faqs.update(faq('f1'), { question: 'Changed?', updatedAt: T0 + 100 });
      expect((await changeTimes(opened)).p1).toBe(T0 + 100);
      await records.faqs.remove(faq('f2'), T0 + 50);
      expect((await changeTimes(opened)).p1).toBe(T0 + 101);
    });

    test('update applies only the given changes and returns the entry; null for an entry gone meanwhile, whose entity is stamped all the same', async () => {
      await open();
      await records.faqs.create(faq('f1'));
      const updated = await records.faqs.update(faq('f1'), { status: 'rejected', position: 3, updatedAt: T0 + 10 });
      expect(updated).toEqual(faq('f1', { status: 'rejected', position: 3, updatedAt: T0 + 10 }));
      expect(await records.faqs.byId('f1')).toEqual(updated);
      expect(await records.faqs.update(faq('gone', { entityRef: 'p9' }), { question: 'x', updatedAt: T0 + 20 })).toBeNull();
      expect((await changeTimes(opened)).p9).toBe(T0 + 20);
    });

    test('remove deletes the entry and stamps its entity', async () => {
      await open();
      await records.faqs.create(faq('f1'));
      await records.faqs.remove(faq('f1'), T0 + 7);
      expect(await records.faqs.byId('f1')).toBeNull();
      expect(await changeTimes(opened)).toEqual({ p1: T0 + 7 });
    });

    test('a create that fails (an id already taken, an unknown store) leaves neither an entry nor a moved stamp', async () => {
      await open();
      await records.faqs.create(faq('f1'));
      await expect(records.faqs.create(faq('f1', { entityRef: 'p2', question: 'Other?' }))).rejects.toThrow();
      await expect(records.faqs.create(faq('f3', { storeId: 'no-such-store', entityRef: 'p3' }))).rejects.toThrow();
      expect(await records.faqs.byId('f1')).toEqual(faq('f1'));
      expect(await records.faqs.byId('f3')).toBeNull();
      expect(await changeTimes(opened)).toEqual({ p1: T0 });
    });

    test("listByEntity: one entity's entries of any status, by position, then creation, then id", async () => {
      await open();
      await records.faqs.create(faq('f4', { position: 1 }));
      await records.faqs.create(faq('f3', { position: 0, createdAt: T0 + 1, status: 'pending' }));
      await records.faqs.create(faq('f2', { position: 0 }));
      await records.faqs.create(faq('f1', { position: 0 }));
      await records.faqs.create(faq('f5', { entityRef: 'p2' }));
      await records.faqs.create(faq('f6', { entityType: 'page' }));
      await records.faqs.create(faq('f7', { storeId: 's2' }));
      expect((await records.faqs.listByEntity('s1', 'product', 'p1')).map((e) => e.id)).toEqual(['f1', 'f2', 'f3', 'f4']);
      expect(await records.faqs.listByEntity('s1', 'category', 'p1')).toEqual([]);
    });

    test("listByStore: a store's entries newest id first, optionally of one status, in keyset pages", async () => {
      await open();
      for (const id of ['f1', 'f2', 'f3', 'f4', 'f5']) await records.faqs.create(faq(id, { status: id === 'f2' ? 'approved' : 'pending', entityRef: id }));
      await records.faqs.create(faq('f9', { storeId: 's2' }));
      const first = await records.faqs.listByStore('s1', undefined, null, 2);
      expect([first.items.map((e) => e.id), first.nextCursor]).toEqual([['f5', 'f4'], 'f4']);
      const second = await records.faqs.listByStore('s1', undefined, first.nextCursor, 2);
      expect([second.items.map((e) => e.id), second.nextCursor]).toEqual([['f3', 'f2'], 'f2']);
      const last = await records.faqs.listByStore('s1', undefined, second.nextCursor, 2);
      expect([last.items.map((e) => e.id), last.nextCursor]).toEqual([['f1'], null]);
      const pending = await records.faqs.listByStore('s1', 'pending', null, 10);
      expect([pending.items.map((e) => e.id), pending.nextCursor]).toEqual([['f5', 'f4', 'f3', 'f1'], null]);
      expect((await records.faqs.listByStore('s1', 'pending', null, 4)).nextCursor).toBeNull();
    });

    test('approved: only approved entries filed under any of the refs, in display order, as id, question and answer', async () => {
      await open();
      await records.faqs.create(faq('f1', { entityRef: 'handle-1', position: 2 }));
      await records.faqs.create(faq('f2', { entityRef: '101', position: 1 }));
      await records.faqs.create(faq('f3', { entityRef: '101', status: 'pending' }));
      await records.faqs.create(faq('f4', { entityRef: 'other' }));
      await records.faqs.create(faq('f5', { entityRef: '101', storeId: 's2' }));
      expect(await records.faqs.approved('s1', 'product', ['101', 'handle-1'])).toEqual([
        { id: 'f2', question: 'Q f2?', answer: '<p>A f2</p>' },
        { id: 'f1', question: 'Q f1?', answer: '<p>A f1</p>' },
      ]);
      expect(await records.faqs.approved('s1', 'page', ['101'])).toEqual([]);
    });
  });

  describe('enrichment records', () => {
    const content = { summary: 'Sturdy.', highlights: ['Two-year warranty', 'Ships in 2 days'], attributes: { Material: 'Canvas', Origin: 'Portugal' } };

    test('put creates the enrichment of a catalogue row; byProductRow reads it back, null for a row without one', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0), KNOWN, T0);
      const row = (await records.products.get('s1', '101'))!;
      expect(await records.enrichments.put('s1', row.id, content, T0)).toEqual({ productRowId: row.id, storeId: 's1', ...content, createdAt: T0, updatedAt: T0 });
      expect(await records.enrichments.byProductRow(row.id)).toEqual({ productRowId: row.id, storeId: 's1', ...content, createdAt: T0, updatedAt: T0 });
      expect(await records.enrichments.byProductRow('no-row')).toBeNull();
    });

    test('put again replaces the content, keeps the creation time, and moves updatedAt forward by at least 1 ms', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0), KNOWN, T0);
      const row = (await records.products.get('s1', '101'))!;
      await records.enrichments.put('s1', row.id, content, T0 + 10);
      const again = await records.enrichments.put('s1', row.id, { summary: 'New.', highlights: [], attributes: {} }, T0);
      expect(again).toEqual({ productRowId: row.id, storeId: 's1', summary: 'New.', highlights: [], attributes: {}, createdAt: T0 + 10, updatedAt: T0 + 11 });
      expect((await records.enrichments.put('s1', row.id, content, T0 + 50)).updatedAt).toBe(T0 + 50);
    });

    test('enrichedAt maps each enriched row to its update time (others absent); remove says whether there was one', async () => {
      await open();
      for (const id of ['101', '102']) await records.products.upsert('s1', 'USD', product(id, T0), KNOWN, T0);
      const [a, b] = [(await records.products.get('s1', '101'))!.id, (await records.products.get('s1', '102'))!.id];
      await records.enrichments.put('s1', a, content, T0 + 5);
      expect(await records.enrichments.enrichedAt([a, b])).toEqual(new Map([[a, T0 + 5]]));
      expect(await records.enrichments.enrichedAt([])).toEqual(new Map());
      expect(await records.enrichments.remove(a)).toBe(true);
      expect(await records.enrichments.remove(a)).toBe(false);
      expect(await records.enrichments.byProductRow(a)).toBeNull();
    });
  });

  describe('catalogue entry records', () => {
    test('upsert writes a page of entries; a second write replaces their data and listing, keeping each row (its id, its place in sync order)', async () => {
      await open();
      await records.entries.upsert(listed('s1', 'page', [entry('e1'), entry('e2', { updatedAt: T0 })], T0, T0 + 1));
      const before = (await records.entries.list('s1', 'page', null, 10)).items;
      expect(before.map((e) => [e.entryId, e.handle, e.platformUpdatedAt, e.listedAt, e.syncedAt, e.createdAt])).toEqual([
        ['e1', 'handle-e1', null, T0, T0 + 1, T0 + 1],
        ['e2', 'handle-e2', T0, T0, T0 + 1, T0 + 1],
      ]);
      await records.entries.upsert(listed('s1', 'page', [entry('e1', { title: 'Renamed', handle: null })], T0 + 100, T0 + 101));
      await records.entries.upsert(listed('s1', 'page', [], T0 + 200, T0 + 201));
      const after = (await records.entries.list('s1', 'page', null, 10)).items;
      expect(after[0]).toEqual({ ...before[0]!, title: 'Renamed', handle: null, listedAt: T0 + 100, syncedAt: T0 + 101 });
      expect(after[1]).toEqual(before[1]!);
    });

    test('list: one store and type, in keyset pages of sync order', async () => {
      await open();
      await records.entries.upsert(listed('s1', 'category', [entry('c1'), entry('c2'), entry('c3')], T0, T0));
      await records.entries.upsert(listed('s1', 'page', [entry('p1')], T0, T0));
      await records.entries.upsert(listed('s2', 'category', [entry('c9')], T0, T0));
      const first = await records.entries.list('s1', 'category', null, 2);
      expect(first.items.map((e) => e.entryId)).toEqual(['c1', 'c2']);
      expect(first.nextCursor).toBe(first.items[1]!.id);
      const last = await records.entries.list('s1', 'category', first.nextCursor, 2);
      expect([last.items.map((e) => e.entryId), last.nextCursor]).toEqual([['c3'], null]);
    });

    test('unlistedAfter: the next entries after a platform id, in platform-id order, flagged when the pass did not list them; through is null past the end', async () => {
      await open();
      await records.entries.upsert(listed('s1', 'page', [entry('a'), entry('b'), entry('c')], T0, T0));
      await records.entries.upsert(listed('s1', 'page', [entry('b')], T0 + 100, T0 + 100));
      await records.entries.upsert(listed('s1', 'category', [entry('a0')], T0, T0));
      expect(await records.entries.unlistedAfter('s1', 'page', T0 + 100, '', 2)).toEqual({ unlisted: ['a'], through: 'b' });
      expect(await records.entries.unlistedAfter('s1', 'page', T0 + 100, 'b', 2)).toEqual({ unlisted: ['c'], through: null });
    });

    test('remove deletes the named entries of that store and type, and counts them', async () => {
      await open();
      await records.entries.upsert(listed('s1', 'page', [entry('a'), entry('b')], T0, T0));
      await records.entries.upsert(listed('s1', 'category', [entry('a')], T0, T0));
      expect(await records.entries.remove('s1', 'page', ['a', 'zz'])).toBe(1);
      expect(await records.entries.remove('s1', 'page', [])).toBe(0);
      expect((await records.entries.list('s1', 'page', null, 10)).items.map((e) => e.entryId)).toEqual(['b']);
      expect((await records.entries.list('s1', 'category', null, 10)).items.map((e) => e.entryId)).toEqual(['a']);
    });

    test("refsOf: an entry's platform id and handle, whichever names it, the platform id winning over another entry's handle; [ref] when none", async () => {
      await open();
      await records.entries.upsert(listed('s1', 'category', [entry('10', { handle: 'shoes' }), entry('shoes', { handle: 'boots' }), entry('11', { handle: '11' })], T0, T0));
      expect(await records.entries.refsOf('s1', 'category', '10')).toEqual(['10', 'shoes']);
      expect(await records.entries.refsOf('s1', 'category', 'shoes')).toEqual(['shoes', 'boots']);
      expect(await records.entries.refsOf('s1', 'category', 'boots')).toEqual(['shoes', 'boots']);
      expect(await records.entries.refsOf('s1', 'category', '11')).toEqual(['11']);
      expect(await records.entries.refsOf('s1', 'page', '10')).toEqual(['10']);
    });

    test('namedBy: the entries of that store and type any ref names by platform id or handle', async () => {
      await open();
      await records.entries.upsert(listed('s1', 'page', [entry('1', { handle: 'about' }), entry('2', { handle: 'faq' }), entry('3')], T0, T0));
      await records.entries.upsert(listed('s2', 'page', [entry('1', { handle: 'about' })], T0, T0));
      const named = await records.entries.namedBy('s1', 'page', ['1', 'faq', 'none']);
      expect(named.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: '1', handle: 'about', title: 'Entry 1', url: 'https://shop.example/pages/1' },
        { id: '2', handle: 'faq', title: 'Entry 2', url: 'https://shop.example/pages/2' },
      ]);
    });
  });

  describe('product records', () => {
    test('an applied upsert stores the product with its variants in order; get reads it back as the catalogue holds it', async () => {
      await open();
      const data = product('101', T0, { sku: 'S', barcode: '4006381333931', mpn: 'M', variants: [variant('v2'), variant('v1', { options: { Size: 'L', Color: 'Olive' } })] });
      expect(await records.products.upsert('s1', 'EUR', data, { known: 'plain' }, T0 + 5)).toBe('applied');
      const row = await records.products.get('s1', '101');
      expect(row).toEqual({
        id: expect.any(String),
        storeId: 's1',
        productId: '101',
        handle: 'handle-101',
        title: 'Product 101',
        descriptionHtml: null,
        descriptionText: 'plain',
        price: '10.00',
        currency: 'EUR',
        availability: 'in_stock',
        sku: 'S',
        barcode: '4006381333931',
        mpn: 'M',
        brand: 'Acme',
        images: ['https://cdn.example/a.jpg'],
        url: 'https://shop.example/products/101',
        options: ['Size'],
        platformUpdatedAt: T0,
        raw: { id: '101' },
        removedAt: null,
        listedAt: null,
        syncedAt: T0 + 5,
        createdAt: T0 + 5,
      });
      expect(await records.products.variantsOf([row!.id, 'no-row'])).toEqual(new Map([[row!.id, data.variants], ['no-row', []]]));
      expect(await records.products.variantsOf([])).toEqual(new Map());
      expect(await records.products.get('s2', '101')).toBeNull();
    });

    test('the raw payload is stored as the JSON it arrived in (text or bytes), key order kept', async () => {
      await open();
      const json = '{"b":1,"a":"Café \\u0000"}';
      await records.products.upsert('s1', null, product('101', T0, { rawJson: json }), KNOWN, T0);
      await records.products.upsert('s1', null, product('102', T0, { rawJson: new TextEncoder().encode(json) }), KNOWN, T0);
      const raw = await query(opened, "SELECT raw FROM products WHERE product_id IN ('101', '102')");
      expect(raw.map((row) => row.raw)).toEqual([json, json]);
      expect((await records.products.get('s1', '101'))!.raw).toEqual({ b: 1, a: 'Café \u0000' });
    });

    test("a variant's text is stored as given whatever it holds (quotes, backslashes, escapes, any script, a lone surrogate as U+FFFD), its options as JSON.stringify wrote them", async () => {
      await open();
      const odd = 'q"uo\\te \\u00e9 \u00e9\u4e2d 🛒 \t\n end';
      const variants = [variant('v1', { title: odd, options: { [odd]: odd } }), variant('v2', { title: 'lone \ud800 surrogate', options: { Size: 'x\udc00y' } })];
      expect(await records.products.upsert('s1', null, product('101', T0, { variants }), KNOWN, T0)).toBe('applied');
      const rows = await query(opened, 'SELECT title, options FROM product_variants ORDER BY position');
      expect(rows).toEqual(variants.map((v) => ({ title: v.title!.toWellFormed(), options: JSON.stringify(v.options) })));
    });

    test('ordering: a live row takes data at least as new as it (syncedAt moving by at least 1 ms), never older data', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0 + 1000), KNOWN, T0);
      expect(await records.products.upsert('s1', 'USD', product('101', T0 + 999, { title: 'Older' }), KNOWN, T0 + 10)).toBe('stale');
      expect((await records.products.get('s1', '101'))!.title).toBe('Product 101');
      expect(await records.products.upsert('s1', 'USD', product('101', T0 + 1000, { title: 'Same time' }), KNOWN, T0 - 10)).toBe('applied');
      const row = (await records.products.get('s1', '101'))!;
      expect([row.title, row.syncedAt]).toEqual(['Same time', T0 + 1]);
    });

    test('variants follow the latest applied list: changed in place, those past its end dropped, none left for an empty list', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0, { variants: [variant('v1'), variant('v2'), variant('v3')] }), KNOWN, T0);
      const id = (await records.products.get('s1', '101'))!.id;
      await records.products.upsert('s1', 'USD', product('101', T0 + 1, { variants: [variant('v1', { price: '12.00' }), variant('v3')] }), KNOWN, T0 + 1);
      expect((await records.products.variantsOf([id])).get(id)).toEqual([variant('v1', { price: '12.00' }), variant('v3')]);
      await records.products.upsert('s1', 'USD', product('101', T0 + 2, { variants: [] }), KNOWN, T0 + 2);
      expect((await records.products.variantsOf([id])).get(id)).toEqual([]);
    });

    test('a stale upsert leaves the variants as they were', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0 + 10), KNOWN, T0);
      const id = (await records.products.get('s1', '101'))!.id;
      await records.products.upsert('s1', 'USD', product('101', T0, { variants: [variant('old')] }), KNOWN, T0 + 1);
      expect((await records.products.variantsOf([id])).get(id)!.map((v) => v.variantId)).toEqual(['v1', 'v2']);
    });

    test('an upsert whose variants cannot be written leaves nothing of it: the product and its variants change together', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0), KNOWN, T0);
      const broken = variant('v9', { variantId: null as unknown as string });
      await expect(records.products.upsert('s1', 'USD', product('101', T0 + 1, { title: 'Half', variants: [variant('v1'), broken] }), KNOWN, T0 + 1)).rejects.toThrow();
      await expect(records.products.upsert('s1', 'USD', product('102', T0, { variants: [broken] }), KNOWN, T0 + 1)).rejects.toThrow();
      const row = (await records.products.get('s1', '101'))!;
      expect([row.title, row.platformUpdatedAt]).toEqual(['Product 101', T0]);
      expect((await records.products.variantsOf([row.id])).get(row.id)!.map((v) => v.variantId)).toEqual(['v1', 'v2']);
      expect(await records.products.get('s1', '102')).toBeNull();
    });

    test("the description's text is derived from the stored row (null when there is none) unless known", async () => {
      await open();
      const seen: (StoredDescription | null)[] = [];
      const derive = (text: string): DescriptionText => ({ derive: (stored) => (seen.push(stored), text) });
      await records.products.upsert('s1', 'USD', product('101', T0, { descriptionHtml: '<p>Hi</p>' }), derive('Hi'), T0);
      await records.products.upsert('s1', 'USD', product('101', T0 + 1, { descriptionHtml: '<p>Hi</p>' }), derive('Hi again'), T0 + 1);
      expect(seen).toEqual([null, { html: '<p>Hi</p>', text: 'Hi' }]);
      expect((await records.products.get('s1', '101'))!.descriptionText).toBe('Hi again');
    });

    test('remove leaves a tombstone: the product is gone, older data cannot bring it back, strictly newer data can', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0), KNOWN, T0);
      const id = (await records.products.get('s1', '101'))!.id;
      expect(await records.products.remove('s1', '101', T0 + 100, false, T0 + 1)).toBe('removed');
      expect(await records.products.get('s1', '101')).toBeNull();
      expect(await records.products.remove('s1', '101', T0 + 200, true, T0 + 2)).toBe('stale');
      expect(await records.products.upsert('s1', 'USD', product('101', T0 + 100), KNOWN, T0 + 3)).toBe('stale');
      expect(await records.products.upsert('s1', 'USD', product('101', T0 + 101, { title: 'Back' }), KNOWN, T0 + 4)).toBe('applied');
      const back = (await records.products.get('s1', '101'))!;
      expect([back.id, back.title, back.removedAt]).toEqual([id, 'Back', null]);
    });

    test('remove older than the stored data is stale unless confirmed; confirmed, the tombstone is dated no earlier than that data', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0 + 1000), KNOWN, T0);
      expect(await records.products.remove('s1', '101', T0 + 500, false, T0 + 1)).toBe('stale');
      expect((await records.products.get('s1', '101'))!.removedAt).toBeNull();
      expect(await records.products.remove('s1', '101', T0 + 500, true, T0 + 2)).toBe('removed');
      const [tombstone] = await query(opened, "SELECT removed_at, synced_at FROM products WHERE product_id = '101'");
      expect([Number(tombstone!.removed_at), Number(tombstone!.synced_at)]).toEqual([T0 + 1000, T0 + 2]);
      expect(await records.products.upsert('s1', 'USD', product('101', T0 + 1000), KNOWN, T0 + 3)).toBe('stale');
    });

    test('remove of a product unknown so far leaves a tombstone, so an older create arriving late stays out', async () => {
      await open();
      expect(await records.products.remove('s1', '404', T0, false, T0)).toBe('removed');
      expect(await records.products.upsert('s1', 'USD', product('404', T0 - 1), KNOWN, T0 + 1)).toBe('stale');
      expect(await records.products.get('s1', '404')).toBeNull();
    });

    test("markListed and unlistedAfter: of the next products in platform-id order, the live ones the pass neither listed nor wrote since it started", async () => {
      await open();
      for (const id of ['a', 'b', 'c', 'd', 'e']) await records.products.upsert('s1', 'USD', product(id, T0), KNOWN, T0);
      await records.products.upsert('s2', 'USD', product('a0', T0), KNOWN, T0);
      const pass = T0 + 100;
      await records.products.markListed('s1', ['b', 'zz'], pass);
      await records.products.markListed('s1', [], pass);
      await records.products.upsert('s1', 'USD', product('c', T0 + 1), KNOWN, pass + 1); // written by a webhook meanwhile
      await records.products.remove('s1', 'd', T0 + 1, false, T0 + 50); // already removed
      expect(await records.products.unlistedAfter('s1', pass, '', 3)).toEqual({ unlisted: ['a'], through: 'c' });
      expect(await records.products.unlistedAfter('s1', pass, 'c', 3)).toEqual({ unlisted: ['e'], through: null });
      const [b] = await query(opened, "SELECT listed_at FROM products WHERE store_id = 's1' AND product_id = 'b'");
      expect(Number(b!.listed_at)).toBe(pass);
    });

    test('refsOf: a live product\'s platform id and handle, whichever names it, the platform id winning; [ref] when none, or only a removed one', async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0, { handle: 'tote' }), KNOWN, T0);
      await records.products.upsert('s1', 'USD', product('tote', T0, { handle: 'bag' }), KNOWN, T0);
      await records.products.upsert('s1', 'USD', product('102', T0, { handle: null }), KNOWN, T0);
      await records.products.upsert('s1', 'USD', product('103', T0, { handle: 'gone' }), KNOWN, T0);
      await records.products.remove('s1', '103', T0 + 1, false, T0 + 1);
      expect(await records.products.refsOf('s1', '101')).toEqual(['101', 'tote']);
      expect(await records.products.refsOf('s1', 'tote')).toEqual(['tote', 'bag']);
      expect(await records.products.refsOf('s1', '102')).toEqual(['102']);
      expect(await records.products.refsOf('s1', 'gone')).toEqual(['gone']);
      expect(await records.products.refsOf('s2', '101')).toEqual(['101']);
    });

    test("namedBy: the store's live products any ref names by platform id or handle", async () => {
      await open();
      await records.products.upsert('s1', 'USD', product('101', T0, { handle: 'tote' }), KNOWN, T0);
      await records.products.upsert('s1', 'USD', product('102', T0), KNOWN, T0);
      await records.products.upsert('s1', 'USD', product('103', T0), KNOWN, T0);
      await records.products.remove('s1', '103', T0 + 1, false, T0 + 1);
      await records.products.upsert('s2', 'USD', product('101', T0, { handle: 'tote' }), KNOWN, T0);
      const named = await records.products.namedBy('s1', ['tote', '102', '103']);
      expect(named.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: '101', handle: 'tote', title: 'Product 101', url: 'https://shop.example/products/101' },
        { id: '102', handle: 'handle-102', title: 'Product 102', url: 'https://shop.example/products/102' },
      ]);
    });

    test("list: a store's live products in keyset pages of sync order", async () => {
      await open();
      for (const id of ['101', '102', '103', '104']) await records.products.upsert('s1', 'USD', product(id, T0), KNOWN, T0);
      await records.products.remove('s1', '102', T0 + 1, false, T0 + 1);
      await records.products.upsert('s2', 'USD', product('105', T0), KNOWN, T0);
      const first = await records.products.list('s1', null, 2);
      expect(first.items.map((p) => p.productId)).toEqual(['101', '103']);
      expect(first.nextCursor).toBe(first.items[1]!.id);
      const last = await records.products.list('s1', first.nextCursor, 2);
      expect([last.items.map((p) => p.productId), last.nextCursor]).toEqual([['104'], null]);
    });
  });
});
