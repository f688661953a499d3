import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, makeTestApp, type TestApp } from './helpers/app.ts';

const START = Date.parse('2026-02-01T00:00:00Z');
let t: TestApp;
let admin: string;
const clock = fixedClock(START);

beforeEach(async () => {
  clock.set(START);
  t = await makeTestApp({ clock });
  admin = await t.keyWith('admin');
});
afterEach(() => t.close());

const list = async (query = '') => {
  const res = await t.request(`/api/v1/admin/leads${query}`, { headers: bearer(admin) });
  return { status: res.status, body: await res.json() };
};

/** Leads a minute apart: lead0 oldest. */
async function seed(emails: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const email of emails) {
    clock.advance(60_000);
    ids.push((await t.leads.create(email)).lead.id);
  }
  return ids;
}

describe('GET /api/v1/admin/leads', () => {
  test('newest first, in the lead view with verifiedAt', async () => {
    const [a, b] = await seed(['a@example.com', 'b@example.org']);
    clock.advance(1000);
    await t.leads.verify(a!);
    const { status, body } = await list();
    expect(status).toBe(200);
    expect(body).toEqual({
      items: [
        { id: b, email: 'b@example.org', verified: false, tokenActive: true, createdAt: new Date(START + 120_000).toISOString(), verifiedAt: null, repeatOf: null },
        { id: a, email: 'a@example.com', verified: true, tokenActive: true, createdAt: new Date(START + 60_000).toISOString(), verifiedAt: new Date(START + 121_000).toISOString(), repeatOf: null },
      ],
      nextCursor: null,
    });
  });

  test('email matches any part of the address, in any case', async () => {
    await seed(['Ann@Shop-One.example', 'bob@shop-one.example', 'carol@other.example']);
    expect((await list('?email=SHOP-ONE')).body.items.map((l: { email: string }) => l.email)).toEqual(['bob@shop-one.example', 'ann@shop-one.example']);
    expect((await list('?email=carol%40other.example')).body.items).toHaveLength(1);
    expect((await list('?email=%25')).body.items).toEqual([]); // no LIKE wildcards
    expect((await list('?email=nobody')).body.items).toEqual([]);
  });

  test('verified and active filters', async () => {
    const [a, b, c] = await seed(['a@example.com', 'b@example.com', 'c@example.com']);
    await t.leads.verify(a!);
    await t.leads.revoke(b!);
    const emails = async (query: string) => (await list(query)).body.items.map((l: { id: string }) => l.id);
    expect(await emails('?verified=true')).toEqual([a]);
    expect(await emails('?verified=false')).toEqual([c, b]);
    expect(await emails('?active=false')).toEqual([b]);
    expect(await emails('?active=true&verified=false')).toEqual([c]);
  });

  test('keyset paging: every lead once, newest first, even while new leads arrive', async () => {
    const ids = await seed(Array.from({ length: 7 }, (_, i) => `lead${i}@example.com`));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { status, body }: { status: number; body: { items: { id: string }[]; nextCursor: string | null } } = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(status).toBe(200);
      seen.push(...body.items.map((lead) => lead.id));
      cursor = body.nextCursor;
      if (pages++ === 0) await seed(['late@example.com']); // newer than every page: never shows up behind the cursor
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);
  });

  test('leads created in the same millisecond are ordered by id, none lost between pages', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.leads.create(`same${i}@example.com`)).lead.id);
    const first = (await list('?limit=2')).body;
    const rest = (await list(`?limit=10&cursor=${first.nextCursor}`)).body;
    expect([...first.items, ...rest.items].map((l: { id: string }) => l.id).sort()).toEqual([...ids].sort());
  });

  test('a bad parameter is 400 invalid_query naming it', async () => {
    for (const [query, name] of [
      ['?verified=yes', 'verified'],
      ['?active=1', 'active'],
      ['?limit=0', 'limit'],
      ['?limit=501', 'limit'],
      ['?cursor=garbage', 'cursor'],
      ['?email=', 'email'],
      ['?status=x', 'status'],
      ['?email=a&email=b', 'email'],
    ]) {
      const { status, body } = await list(query);
      expect(status).toBe(400);
      expect(body.error).toBe('invalid_query');
      expect(body.detail).toStartWith(`${name}: `);
    }
  });

  test('needs the admin scope', async () => {
    expect((await t.request('/api/v1/admin/leads')).status).toBe(401);
    expect((await t.request('/api/v1/admin/leads', { headers: bearer(await t.keyWith('dashboard:read')) })).status).toBe(403);
  });
});
