import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { addFaq, patchFaq, realisticProduct, seedStore, syncProduct } from './helpers/signals.ts';
import type { KeyStore } from '../src/auth/keys.ts';
import type { StoreRow } from '../src/storage/sqlite/db/schema/index.ts';
import { createPublicFaqs, type PublicFaqAnswer } from '../src/faqs/public.ts';

let t: TestApp;
let storeId: string;
const SHOP = 'acme.myplatform-a.com';

beforeEach(async () => {
  t = await makeTestApp();
  storeId = await seedStore(t, 'platform-a', SHOP);
});
afterEach(() => t.close());

const admin = async () => bearer(await t.keyWith('admin'));
const list = async (entityRef = 'tote') => {
  const res = await t.request(`/api/v1/admin/faqs?storeId=${storeId}&entityType=product&entityRef=${entityRef}`, { headers: await admin() });
  expect(res.status).toBe(200);
  return (await res.json()).items as any[];
};
const faq = (overrides: Record<string, unknown> = {}) => ({ storeId, entityType: 'product', entityRef: 'tote', question: 'Is it waterproof?', answer: '<p>Water resistant.</p>', ...overrides });

describe('admin FAQ endpoints', () => {
  test('create answers 201 with the entry, pending by default', async () => {
    const res = await t.request('/api/v1/admin/faqs', jsonRequest('POST', faq(), await admin()));
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ storeId, entityType: 'product', entityRef: 'tote', question: 'Is it waterproof?', answer: '<p>Water resistant.</p>', status: 'pending', position: 0 });
    expect(typeof body.id).toBe('string');
  });

  test('the admin scope is required', async () => {
    expect((await t.request('/api/v1/admin/faqs', jsonRequest('POST', faq()))).status).toBe(401);
    expect((await t.request('/api/v1/admin/faqs', jsonRequest('POST', faq(), bearer(await t.keyWith('dashboard:read'))))).status).toBe(403);
  });

  test('an unknown storeId is 404 and nothing is written', async () => {
    const res = await t.request('/api/v1/admin/faqs', jsonRequest('POST', faq({ storeId: 'nope' }), await admin()));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found' });
    expect(Number((await t.query('SELECT count(*) AS n FROM faq_entries'))[0]!.n)).toBe(0);
  });

  test('invalid bodies are 400: bad entity type, status, unknown field, empty question after cleaning', async () => {
    for (const body of [faq({ entityType: 'collection' }), faq({ status: 'live' }), faq({ extra: 1 }), faq({ question: '<b></b>' }), faq({ answer: '<script>x</script>' }), faq({ position: -1 })]) {
      const res = await t.request('/api/v1/admin/faqs', jsonRequest('POST', body, await admin()));
      expect(res.status).toBe(400);
      expect(Object.keys(await res.json()).sort()).toEqual(['detail', 'error']);
    }
  });

  test('question is stored as plain text and answer as sanitized basic HTML', async () => {
    const created = await addFaq(t, faq({ question: '<b>Is it</b> safe?\u0007 <script>alert(1)</script>', answer: '<p onclick="x">Yes <a href="javascript:alert(1)">see</a> <a href="https://acme.test/care">care</a></p><script>alert(1)</script>' }));
    expect(created.question).toBe('Is it safe?');
    expect(created.answer).toBe('<p>Yes see <a href="https://acme.test/care">care</a></p>');
  });

  test('patch updates any of question, answer, status and position; list is in display order', async () => {
    const a = await addFaq(t, faq({ question: 'A?', position: 2 }));
    const b = await addFaq(t, faq({ question: 'B?', position: 1 }));
    const c = await addFaq(t, faq({ question: 'C?', position: 1 }));
    expect((await list()).map((e) => e.question)).toEqual(['B?', 'C?', 'A?']);
    const res = await patchFaq(t, a.id, { status: 'approved', position: 0, answer: '<ul><li>new</li></ul>' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'approved', position: 0, answer: '<ul><li>new</li></ul>', question: 'A?' });
    expect((await list()).map((e) => e.id)).toEqual([a.id, b.id, c.id]);
    const renamed = await (await patchFaq(t, a.id, { question: 'A again?' })).json();
    expect(renamed).toMatchObject({ question: 'A again?', status: 'approved' });
    expect((await patchFaq(t, 'missing', { status: 'approved' })).status).toBe(404);
    expect((await patchFaq(t, a.id, {})).status).toBe(400);
  });

  test('list is per entity with entityType and entityRef (both or neither); an unknown store is 404', async () => {
    await addFaq(t, faq());
    await addFaq(t, faq({ entityType: 'page', entityRef: 'shipping' }));
    expect(await list('other')).toEqual([]);
    expect(await list()).toHaveLength(1);
    const half = await t.request(`/api/v1/admin/faqs?storeId=${storeId}&entityType=product`, { headers: await admin() });
    expect(half.status).toBe(400);
    expect((await half.json()).error).toBe('invalid_query');
    expect((await t.request('/api/v1/admin/faqs?storeId=nope&entityType=product&entityRef=x', { headers: await admin() })).status).toBe(404);
  });

  test('without an entity, the whole store is listed newest first, paged, optionally by status (the moderation queue)', async () => {
    const other = await seedStore(t, 'platform-a', 'other.myplatform-a.com');
    await addFaq(t, faq({ storeId: other }));
    const created: string[] = [];
    for (const [entityRef, status] of [['tote', 'pending'], ['mug', 'approved'], ['cap', 'pending'], ['bag', 'rejected'], ['pen', 'pending']]) {
      created.push((await addFaq(t, faq({ entityRef, status }))).id);
    }
    const get = async (query: string) => {
      const res = await t.request(`/api/v1/admin/faqs?storeId=${storeId}${query}`, { headers: await admin() });
      expect(res.status).toBe(200);
      return (await res.json()) as { items: { id: string; entityRef: string; status: string }[]; nextCursor: string | null };
    };
    const all = await get('');
    expect(all.items.map((i) => i.entityRef)).toEqual(['pen', 'bag', 'cap', 'mug', 'tote']);
    expect(all.nextCursor).toBeNull();
    const queue = await get('&status=pending&limit=2');
    expect(queue.items.map((i) => i.entityRef)).toEqual(['pen', 'cap']);
    const rest = await get(`&status=pending&limit=2&cursor=${queue.nextCursor}`);
    expect(rest.items.map((i) => i.entityRef)).toEqual(['tote']);
    expect(rest.nextCursor).toBeNull();
    const entityPending = await get('&entityType=product&entityRef=mug&status=pending');
    expect(entityPending.items).toEqual([]);
    expect((await t.request(`/api/v1/admin/faqs?storeId=${storeId}&status=done`, { headers: await admin() })).status).toBe(400);
  });

  test('delete answers 204, then 404', async () => {
    const a = await addFaq(t, faq());
    expect((await t.request(`/api/v1/admin/faqs/${a.id}`, { method: 'DELETE', headers: await admin() })).status).toBe(204);
    expect((await t.request(`/api/v1/admin/faqs/${a.id}`, { method: 'DELETE', headers: await admin() })).status).toBe(404);
    expect(await list()).toEqual([]);
  });
});

describe('public FAQ endpoint for the widget', () => {
  const ORIGIN = 'https://www.acme-shop.test';
  let widgetKey: string;

  beforeEach(async () => {
    widgetKey = (await t.keys.create({ scopes: ['products:read'], allowedDomains: ['www.acme-shop.test', '*.acme-cdn.test', 'localhost'], storeId })).key;
  });

  const get = (query: string, headers: Record<string, string>) => t.request(`/api/v1/public/faqs?${query}`, { headers });
  const fromShop = (extra: Record<string, string> = {}) => ({ 'X-Api-Key': widgetKey, Origin: ORIGIN, ...extra });
  /** svc refuses to create an unbound products:read key now; older databases may still hold one. */
  const unboundLegacyKey = async () => {
    const { key, record } = await t.keys.create({ scopes: ['products:read'], allowedDomains: ['www.acme-shop.test'], storeId });
    await t.commitElsewhere('UPDATE api_keys SET store_id = NULL WHERE id = ?', record.id);
    return key;
  };

  test('returns approved entries only, in display order, in the widget contract shape', async () => {
    const second = await addFaq(t, faq({ question: 'Second?', status: 'approved', position: 2 }));
    const first = await addFaq(t, faq({ question: 'First?', answer: '<p>Yes <strong>really</strong></p>', status: 'approved', position: 1 }));
    await addFaq(t, faq({ question: 'Pending?' }));
    await addFaq(t, faq({ question: 'Rejected?', status: 'rejected' }));
    const res = await get('type=product&ref=tote', fromShop());
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(res.headers.get('vary')).toContain('Origin');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get('cache-control')).toContain('max-age=');
    // As every other JSON answer of svc (Elysia's) declares it.
    expect(res.headers.get('content-type')).toBe('application/json;charset=utf-8');
    expect(await res.json()).toEqual({
      entity: { type: 'product', ref: 'tote' },
      items: [
        { id: first.id, question: 'First?', answer: '<p>Yes <strong>really</strong></p>' },
        { id: second.id, question: 'Second?', answer: '<p>Water resistant.</p>' },
      ],
    });
  });

  test('ETag gives 304, and changes when an approved entry changes', async () => {
    const a = await addFaq(t, faq({ status: 'approved' }));
    const first = await get('type=product&ref=tote', fromShop());
    const etag = first.headers.get('etag')!;
    const again = await get('type=product&ref=tote', fromShop({ 'If-None-Match': etag }));
    expect(again.status).toBe(304);
    expect(again.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    await patchFaq(t, a.id, { answer: 'Changed' });
    const changed = await get('type=product&ref=tote', fromShop({ 'If-None-Match': etag }));
    expect(changed.status).toBe(200);
    expect((await changed.json()).items[0].answer).toBe('Changed');
  });

  test('a product FAQ is found by the product id or its handle', async () => {
    const product = realisticProduct('platform-a', 4242, SHOP);
    await syncProduct(t, storeId, product);
    await addFaq(t, faq({ entityRef: '4242', question: 'By id?', status: 'approved' }));
    await addFaq(t, faq({ entityRef: 'waxed-canvas-tote', question: 'By handle?', status: 'approved' }));
    for (const ref of ['4242', 'waxed-canvas-tote']) {
      const body = await (await get(`type=product&ref=${ref}`, fromShop())).json();
      expect(body.items.map((i: any) => i.question).sort()).toEqual(['By handle?', 'By id?']);
    }
  });

  test('a storefront on http://localhost:PORT is accepted by a key allowing localhost (port ignored)', async () => {
    expect((await get('type=product&ref=tote', fromShop({ Origin: 'http://localhost:41234' }))).status).toBe(200);
  });

  test('without Origin, the Referer host decides', async () => {
    expect((await get('type=product&ref=tote', { 'X-Api-Key': widgetKey, Referer: 'https://www.acme-shop.test/products/tote' })).status).toBe(200);
    expect((await get('type=product&ref=tote', { 'X-Api-Key': widgetKey, Referer: 'https://evil.test/products/tote' })).status).toBe(403);
  });

  test('wildcard entries allow subdomains but not the bare domain', async () => {
    expect((await get('type=product&ref=tote', fromShop({ Origin: 'https://eu.acme-cdn.test' }))).status).toBe(200);
    expect((await get('type=product&ref=tote', fromShop({ Origin: 'https://a.b.acme-cdn.test' }))).status).toBe(200);
    expect((await get('type=product&ref=tote', fromShop({ Origin: 'https://acme-cdn.test' }))).status).toBe(403);
  });

  test('a wildcard matches whole labels only: lookalike hosts ending elsewhere or without the dot are refused', async () => {
    for (const origin of ['https://eu.acme-cdn.test.evil.test', 'https://acme-cdn.test.evil.test', 'https://evilacme-cdn.test', 'https://eu.acme-cdn.testing']) {
      expect((await get('type=product&ref=tote', fromShop({ Origin: origin }))).status).toBe(403);
    }
  });

  test('when an Origin is sent it decides, even if the Referer is allowed', async () => {
    const res = await get('type=product&ref=tote', fromShop({ Origin: 'https://evil.test', Referer: 'https://www.acme-shop.test/products/tote' }));
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('an origin of another scheme with an allowed host name is refused', async () => {
    for (const origin of ['chrome-extension://www.acme-shop.test', 'ftp://www.acme-shop.test', 'file://www.acme-shop.test/x']) {
      expect((await get('type=product&ref=tote', fromShop({ Origin: origin }))).status).toBe(403);
    }
  });

  test('answers are per entity: the cache never serves one ref\'s entries for another', async () => {
    await addFaq(t, faq({ entityRef: 'tote', question: 'Tote?', status: 'approved' }));
    await addFaq(t, faq({ entityRef: 'bag', question: 'Bag?', status: 'approved' }));
    for (const [ref, question] of [['tote', 'Tote?'], ['bag', 'Bag?'], ['tote', 'Tote?']]) {
      const body = await (await get(`type=product&ref=${ref}`, fromShop())).json();
      expect(body.items.map((i: any) => i.question)).toEqual([question]);
    }
  });

  const questionsOf = async (query: string) => {
    const res = await get(query, fromShop());
    expect(res.status).toBe(200);
    const body = await res.json();
    return [body.entity.ref, body.items.map((i: any) => i.question)];
  };

  test('a query is answered as its decoding names, whatever its spelling, order, repeated or unknown parameters; never with another query\'s cached answer', async () => {
    for (const [entityRef, question] of [['tote', 'Tote?'], ['bag', 'Bag?'], ['a b', 'Space?'], ['a+b', 'Plus?']]) await addFaq(t, faq({ entityRef, question, status: 'approved' }));
    // `+` is a space in a query, `%2B` a plus, `%6F` an `o`; the first type and ref decide.
    const cases: [string, string, string[]][] = [
      ['type=product&ref=tote', 'tote', ['Tote?']],
      ['type=product&ref=t%6Fte', 'tote', ['Tote?']],
      ['type=product&ref=a+b', 'a b', ['Space?']],
      ['type=product&ref=a%2Bb', 'a+b', ['Plus?']],
      ['type=product&ref=a%20b', 'a b', ['Space?']],
      ['type=%70roduct&ref=a%2bb', 'a+b', ['Plus?']],
      ['type=product&ref=tote&ref=bag', 'tote', ['Tote?']],
      ['type=product&ref=bag&ref=tote', 'bag', ['Bag?']],
      ['ref=bag&type=product&utm=x', 'bag', ['Bag?']],
      ['type=product&ref=tote&', 'tote', ['Tote?']],
      ['type=product&ref=tote#bag', 'tote', ['Tote?']],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [query, ref, questions] of cases) expect(await questionsOf(query)).toEqual([ref, questions]);
    }
  });

  test('a malformed percent-escape in the query names no other entity: the same answer every time', async () => {
    await addFaq(t, faq({ entityRef: 'tote', question: 'Tote?', status: 'approved' }));
    const first = await questionsOf('type=product&ref=tote%E0%A4%A');
    expect(first[1]).toEqual([]);
    expect(await questionsOf('type=product&ref=tote%E0%A4%A')).toEqual(first);
    expect(await questionsOf('type=product&ref=tote')).toEqual(['tote', ['Tote?']]);
  });

  const refusals: [string, () => Record<string, string> | Promise<Record<string, string>>, string][] = [
    ['no key', () => ({ Origin: ORIGIN }), 'missing_api_key'],
    ['an invalid key', () => fromShop({ 'X-Api-Key': 'sk_live_' + 'x'.repeat(43) }), 'invalid_api_key'],
    ['a malformed key', () => fromShop({ 'X-Api-Key': 'hello' }), 'invalid_api_key'],
    ['a key without products:read', async () => fromShop({ 'X-Api-Key': (await t.keys.create({ scopes: ['probe:scan'], allowedDomains: ['www.acme-shop.test'], storeId })).key }), 'insufficient_scope'],
    ['an admin key (broader than products:read: it must not sit in page source)', async () => fromShop({ 'X-Api-Key': (await t.keys.create({ scopes: ['admin'], allowedDomains: ['www.acme-shop.test'], storeId })).key }), 'key_too_broad'],
    ['a products:read key that also reads the dashboard', async () => fromShop({ 'X-Api-Key': (await t.keys.create({ scopes: ['products:read', 'dashboard:read'], allowedDomains: ['www.acme-shop.test'], storeId })).key }), 'key_too_broad'],
    ['a key not bound to a store (made before svc required one)', async () => fromShop({ 'X-Api-Key': await unboundLegacyKey() }), 'key_not_bound'],
    ['an origin not in allowedDomains', () => fromShop({ Origin: 'https://evil.test' }), 'origin_not_allowed'],
    ['a key with no allowedDomains, even from svc’s own page', async () => ({ 'X-Api-Key': (await t.keys.create({ scopes: ['products:read'], storeId })).key, Origin: t.config.baseUrl }), 'origin_not_allowed'],
    ['a key with no allowedDomains, even when the browser says same-origin', async () => ({ 'X-Api-Key': (await t.keys.create({ scopes: ['products:read'], allowedDomains: [], storeId })).key, 'Sec-Fetch-Site': 'same-origin', Referer: `${t.config.baseUrl}/console/widget-preview` }), 'origin_not_allowed'],
    ['a lookalike domain', () => fromShop({ Origin: 'https://www.acme-shop.test.evil.test' }), 'origin_not_allowed'],
    ['an opaque origin', () => fromShop({ Origin: 'null' }), 'origin_not_allowed'],
    ['neither Origin nor Referer', () => ({ 'X-Api-Key': widgetKey }), 'origin_required'],
  ];
  for (const [name, headers, code] of refusals) {
    test(`403 for ${name}, with no CORS grant`, async () => {
      await addFaq(t, faq({ status: 'approved' }));
      const res = await get('type=product&ref=tote', await headers());
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await res.json()).toEqual({ error: code, detail: expect.any(String) });
    });
  }

  test('403 for a revoked key', async () => {
    const { key, record } = await t.keys.create({ scopes: ['products:read'], allowedDomains: ['www.acme-shop.test'], storeId });
    expect((await get('type=product&ref=tote', fromShop({ 'X-Api-Key': key }))).status).toBe(200);
    await t.keys.revoke(record.id);
    expect((await get('type=product&ref=tote', fromShop({ 'X-Api-Key': key }))).status).toBe(403);
  });

  test('a key revoked by another process (another database connection) is refused, though its answer was cached (at once on SQLite, once its notification is heard on PostgreSQL)', async () => {
    const { key, record } = await t.keys.create({ scopes: ['products:read'], allowedDomains: ['www.acme-shop.test'], storeId });
    expect((await get('type=product&ref=tote', fromShop({ 'X-Api-Key': key }))).status).toBe(200);
    expect((await get('type=product&ref=tote', fromShop({ 'X-Api-Key': key }))).status).toBe(200);
    await t.commitElsewhere('UPDATE api_keys SET revoked_at = 1 WHERE id = ?', record.id);
    expect((await get('type=product&ref=tote', fromShop({ 'X-Api-Key': key }))).status).toBe(403);
  });

  test('a cached answer still checks the origin of every request', async () => {
    expect((await get('type=product&ref=tote', fromShop())).status).toBe(200);
    expect((await get('type=product&ref=tote', fromShop({ Origin: 'https://evil.test' }))).status).toBe(403);
    expect((await get('type=product&ref=tote', { 'X-Api-Key': widgetKey })).status).toBe(403);
  });

  test('each allowed origin gets its own CORS grant for the same answer', async () => {
    await addFaq(t, faq({ status: 'approved' }));
    for (const origin of [ORIGIN, 'https://img.acme-cdn.test', ORIGIN, 'https://img.acme-cdn.test']) {
      const res = await get('type=product&ref=tote', fromShop({ Origin: origin }));
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    }
  });

  test('a refused origin stays refused on its repeat calls to a cached answer, and an allowed one keeps its answer', async () => {
    expect((await get('type=product&ref=tote', fromShop())).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      expect((await get('type=product&ref=tote', fromShop({ Origin: 'https://evil.test' }))).status).toBe(403);
      const allowed = await get('type=product&ref=tote', fromShop());
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    }
  });

  test('a key broader than products:read is refused with a reason naming its other scopes', async () => {
    const key = (await t.keys.create({ scopes: ['admin'], allowedDomains: ['www.acme-shop.test'], storeId })).key;
    const res = await get('type=product&ref=tote', fromShop({ 'X-Api-Key': key }));
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error).toBe('key_too_broad');
    expect(body.detail).toContain('admin');
    expect(body.detail).toContain('page source');
  });

  test('a bad type or ref is 400 once the caller is authorized', async () => {
    expect((await get('type=collection&ref=tote', fromShop())).status).toBe(400);
    expect((await get('type=product', fromShop())).status).toBe(400);
    expect((await get('type=collection&ref=tote', { Origin: ORIGIN })).status).toBe(403);
  });

  test('the entries of another store are never served', async () => {
    const other = await seedStore(t, 'platform-a', 'other.myplatform-a.com');
    await addFaq(t, faq({ storeId: other, status: 'approved' }));
    expect((await (await get('type=product&ref=tote', fromShop())).json()).items).toEqual([]);
  });

  test('after app/uninstalled the store\'s FAQs are withdrawn (410)', async () => {
    await addFaq(t, faq({ status: 'approved' }));
    await t.webhooks.stores.deactivate(storeId);
    const res = await get('type=product&ref=tote', fromShop());
    expect(res.status).toBe(410);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  const preflight = (origin: string) =>
    t.request('/api/v1/public/faqs?type=product&ref=tote', { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' } });
  const answerOf = async (res: Response) => ({ status: res.status, headers: Object.fromEntries([...res.headers].filter(([name]) => name !== 'x-request-id')), body: await res.text() });

  test('a CORS preflight answers the same for allowed, unknown and lookalike origins (the GET decides)', async () => {
    const allowed = await answerOf(await preflight('http://localhost:5173'));
    expect(allowed.status).toBe(204);
    expect(allowed.headers).toMatchObject({ 'access-control-allow-methods': 'GET', 'access-control-allow-headers': 'X-Api-Key', 'access-control-max-age': '600' });
    for (const origin of ['https://evil.test', 'https://www.acme-shop.test.evil.test', 'https://eu.acme-cdn.test.evil.test', 'null']) {
      expect(await answerOf(await preflight(origin))).toEqual(allowed);
    }
    // The GET decides: an origin no key allows gets a 403 it cannot read; an allowed one its entries.
    await addFaq(t, faq({ status: 'approved' }));
    const refused = await get('type=product&ref=tote', fromShop({ Origin: 'https://evil.test' }));
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect((await get('type=product&ref=tote', fromShop())).headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });
});

describe('public FAQ answer cache: what it keeps of client input', () => {
  const KEY = `sk_live_${'k'.repeat(43)}`;
  const ORIGIN = 'https://www.acme-shop.test';
  const widget = { id: 'k1', name: 'widget', keyPrefix: 'sk_live_kkkk', scopes: ['products:read'], allowedDomains: ['www.acme-shop.test'], storeId: 's1', createdAt: '', revokedAt: null };
  /** The public FAQ read over stand-ins, counting the key checks that reach the key store. */
  const publicFaqs = () => {
    const counts = { verified: 0, stamp: 1 };
    const faqs = createPublicFaqs({
      faqs: { approved: () => [] },
      keys: { verify: (raw: string) => (counts.verified++, raw === KEY ? widget : null), used: () => {} } as unknown as KeyStore,
      catalog: { refsOf: (_store, _type, ref) => [ref] },
      storeOf: () => ({ id: 's1', status: 'active', signalsWithdrawnAt: null }) as StoreRow,
      changeStamp: () => counts.stamp,
      isOwnPage: () => false,
    });
    const ask = (query: string, headers: Record<string, string> = {}) =>
      // The stand-in verifies keys at once, so every answer is too.
      faqs.answer(new Request(`http://svc.test/api/v1/public/faqs${query}`, { headers: { 'X-Api-Key': KEY, Origin: ORIGIN, ...headers } })) as PublicFaqAnswer;
    return { ask, counts };
  };

  test('an answer is kept by the key and the query as sent: a repeat (its key padded or not) checks no key; another query or a database change checks it again', () => {
    const { ask, counts } = publicFaqs();
    ask('?type=product&ref=tote');
    ask('?type=product&ref=tote');
    expect(counts.verified).toBe(1);
    ask('?ref=tote&type=product');
    ask('?type=product&ref=bag');
    expect(counts.verified).toBe(3);
    ask('?type=product&ref=tote', { 'X-Api-Key': ` ${KEY} ` });
    ask('?type=product&ref=tote', { 'X-Api-Key': ` ${KEY} ` });
    expect(counts.verified).toBe(3);
    counts.stamp++;
    ask('?type=product&ref=tote');
    expect(counts.verified).toBe(4);
  });

  test('the last answer is given again only to the same key, URL and Origin while the database is unchanged', () => {
    const { ask, counts } = publicFaqs();
    ask('?type=product&ref=tote');
    const kept = ask('?type=product&ref=tote');
    expect(ask('?type=product&ref=tote')).toBe(kept);
    expect(() => ask('?type=product&ref=tote', { Origin: 'https://evil.test' })).toThrow('allowedDomains');
    expect(() => ask('?type=product&ref=tote', { 'X-Api-Key': `sk_live_${'o'.repeat(43)}` })).toThrow('unknown');
    expect(ask('?type=product&ref=bag').etag).not.toBe(kept.etag);
    expect(ask('?type=product&ref=tote')).toBe(kept);
    expect(counts.verified).toBe(4);
    counts.stamp++;
    ask('?type=product&ref=tote');
    expect(counts.verified).toBe(5);
  });

  test('a key that fails the check is never kept: each of its calls is checked', () => {
    const { ask, counts } = publicFaqs();
    const other = `sk_live_${'o'.repeat(43)}`;
    for (let i = 0; i < 3; i++) expect(() => ask('?type=product&ref=tote', { 'X-Api-Key': other })).toThrow('unknown');
    expect(counts.verified).toBe(3);
  });

  test('a query longer than 1024 characters is answered every time, never kept', () => {
    const { ask, counts } = publicFaqs();
    const long = `?type=product&ref=tote&pad=${'x'.repeat(1024)}`;
    expect(ask(long).origin).toBe(ORIGIN);
    expect(ask(long).origin).toBe(ORIGIN);
    expect(counts.verified).toBe(2);
    const longest = `?type=product&ref=tote&pad=${'x'.repeat(1024 - '?type=product&ref=tote&pad='.length)}`;
    ask(longest);
    ask(longest);
    expect(counts.verified).toBe(3);
  });

  test('an allowed Origin longer than 300 characters gets its grant every time, never remembered; a usual one is', () => {
    const { ask } = publicFaqs();
    ask('?type=product&ref=tote');
    expect(ask('?type=product&ref=tote')).toBe(ask('?type=product&ref=tote'));
    const long = `${ORIGIN}/${'x'.repeat(300 - ORIGIN.length)}`;
    const first = ask('?type=product&ref=tote', { Origin: long });
    const second = ask('?type=product&ref=tote', { Origin: long });
    expect([first.origin, second.origin]).toEqual([long, long]);
    expect(first).not.toBe(second);
    const remembered = long.slice(0, 300);
    expect(ask('?type=product&ref=tote', { Origin: remembered })).toBe(ask('?type=product&ref=tote', { Origin: remembered }));
  });
});
