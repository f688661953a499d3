import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { scanPayload, TELEMETRY, tokenInit } from './helpers/probe.ts';

let t: TestApp;

/** A platform-A store connected with a permanent token (no hook registration, no outbound call). */
async function createStore(admin: string): Promise<string> {
  const res = await t.request(
    '/api/v1/admin/stores',
    jsonRequest('POST', { platform: 'platform-a', domain: 'shop.myplatform-a.com', currency: 'EUR', credentials: { accessToken: 'token' } }, bearer(admin)),
  );
  expect(res.status).toBe(201);
  return (await res.json()).id;
}
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(() => t.close());

describe('admin guard', () => {
  test('401 without an Authorization header', async () => {
    const res = await t.request('/api/v1/admin/keys');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'unauthorized' });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('401 with an unknown key, a malformed header or a revoked key', async () => {
    const admin = await t.keys.create({ scopes: ['admin'] });
    await t.keys.revoke(admin.record.id);
    for (const authorization of [`Bearer sk_live_${'x'.repeat(43)}`, `Basic ${btoa('a:b')}`, 'Bearer', `Bearer ${admin.key}`]) {
      const res = await t.request('/api/v1/admin/keys', { headers: { authorization } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_api_key' });
    }
  });

  test('403 with a valid key that lacks the admin scope', async () => {
    const res = await t.request('/api/v1/admin/keys', { headers: bearer(await t.keyWith('probe:scan', 'dashboard:read')) });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
  });

  test('401 comes before the body is read or validated; an unknown admin path is 404 (every route is listed in /openapi.json)', async () => {
    const invalid = await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: 'nope' }));
    expect(invalid.status).toBe(401);
    const unknownRoute = await t.request('/api/v1/admin/secret-things');
    expect(unknownRoute.status).toBe(404);
  });
});

describe('admin keys endpoints', () => {
  test('POST /api/v1/admin/keys returns 201 with the raw key once, then it authenticates', async () => {
    const admin = await t.keyWith('admin');
    const storeId = await createStore(admin);
    const res = await t.request(
      '/api/v1/admin/keys',
      jsonRequest('POST', { name: 'widget', scopes: ['products:read'], allowedDomains: ['shop.example.com'], storeId }, bearer(admin)),
    );
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ name: 'widget', scopes: ['products:read'], allowedDomains: ['shop.example.com'], storeId, revokedAt: null });
    expect(body.key).toMatch(/^sk_live_/);
    expect((await t.keys.verify(body.key))?.id).toBe(body.id);

    const listed = await (await t.request('/api/v1/admin/keys', { headers: bearer(admin) })).json();
    expect(listed.items.map((k: { id: string }) => k.id)).toContain(body.id);
    expect(JSON.stringify(listed)).not.toContain(body.key);
  });

  test('POST /api/v1/admin/keys rejects bad input with 400 and a detail', async () => {
    const admin = bearer(await t.keyWith('admin'));
    const cases = [
      { body: { scopes: [] }, detail: 'scopes' },
      { body: { scopes: ['root'] }, detail: 'scopes' },
      { body: { scopes: ['admin'], extra: 1 }, detail: '' },
      { body: { scopes: ['products:read'], allowedDomains: ['not a domain'] }, detail: 'allowedDomains' },
    ];
    for (const { body, detail } of cases) {
      const res = await t.request('/api/v1/admin/keys', jsonRequest('POST', body, admin));
      expect(res.status).toBe(400);
      const json = await res.json();
      expect(typeof json.error).toBe('string');
      expect(json.detail).toContain(detail);
    }
    expect(await t.keys.list()).toHaveLength(1);
  });

  test('a key bound to a store that does not exist is refused (400 unknown_store)', async () => {
    const res = await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['products:read'], storeId: 'no-such-store' }, bearer(await t.keyWith('admin'))));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'unknown_store' });
    expect(await t.keys.list()).toHaveLength(1);
  });

  test('a products:read key without a store is refused (400 store_required): the widget could never use it', async () => {
    const admin = bearer(await t.keyWith('admin'));
    for (const scopes of [['products:read'], ['products:read', 'dashboard:read']]) {
      const res = await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes, allowedDomains: ['shop.example.com'] }, admin));
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: 'store_required',
        detail: 'a products:read key is for the FAQ widget, which serves one store: give its storeId (svc keys create --store STORE_ID); admin keys need none',
      });
    }
    // Admin keys (which imply products:read) and keys without products:read need no store.
    expect((await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['admin'] }, admin))).status).toBe(201);
    expect((await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['admin', 'products:read'] }, admin))).status).toBe(201);
    expect((await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['dashboard:read'] }, admin))).status).toBe(201);
  });

  test('DELETE /api/v1/admin/keys/:id revokes at once; unknown id is 404', async () => {
    const admin = bearer(await t.keyWith('admin'));
    const victim = await t.keys.create({ scopes: ['admin'] });
    const res = await t.request(`/api/v1/admin/keys/${victim.record.id}`, { method: 'DELETE', headers: admin });
    expect(res.status).toBe(200);
    expect((await res.json()).revokedAt).toBeString();
    expect((await t.request('/api/v1/admin/keys', { headers: bearer(victim.key) })).status).toBe(401);
    const missing = await t.request('/api/v1/admin/keys/nope', { method: 'DELETE', headers: admin });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'not_found' });
  });
});

describe('leads', () => {
  test('public sign-up creates an unverified lead with a token', async () => {
    const res = await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'New@Example.com' }));
    expect(res.status).toBe(201);
    const { id, apiToken } = await res.json();
    expect(apiToken.length).toBeGreaterThanOrEqual(43);
    expect(await t.leads.findByToken(apiToken)).toMatchObject({ id, verified: false, email: 'new@example.com' });
  });

  test('sign-up rejects an invalid email (400)', async () => {
    const bad = await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'not-an-email' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_email' });
  });

  test('sign-up does not reveal whether an email is registered: a repeat sign-up answers and its token acts exactly as a first one', async () => {
    const admin = bearer(await t.keyWith('admin'));
    // Everything a caller can see of a sign-up: the answer, then what its token does on telemetry.
    const signUpAndScan = async (email: string) => {
      const res = await t.request('/api/v1/public/leads', jsonRequest('POST', { email }));
      const body = await res.json();
      const scan = await t.request(TELEMETRY, tokenInit(body.apiToken, scanPayload()));
      const names = (response: Response) => [...response.headers.keys()].filter((name) => !['date', 'x-request-id'].includes(name)).sort();
      const seen = {
        status: res.status,
        headers: names(res),
        body: Object.keys(body),
        lengths: [body.id.length, body.apiToken.length],
        scan: { status: scan.status, headers: names(scan), policy: scan.headers.get('ratelimit-policy'), body: await scan.text() },
      };
      return { seen, id: body.id as string, apiToken: body.apiToken as string };
    };
    const first = await signUpAndScan('known@example.com');
    // Verified, so its token has the authed tier: a repeat that inherited anything of it would show.
    await t.request(`/api/v1/admin/leads/${first.id}/verify`, { method: 'POST', headers: admin });
    const fresh = await signUpAndScan('fresh@example.com');
    const repeat = await signUpAndScan('Known@Example.com');
    expect(repeat.seen).toEqual(fresh.seen);
    expect(repeat.seen.scan.status).toBe(204);
    expect(repeat.seen.scan.policy).toBe(`"anonymous";q=${t.config.rates.anonymous};w=60`);

    // The first lead is untouched: its token still sends scans at its verified tier.
    const again = await t.request(TELEMETRY, tokenInit(first.apiToken, scanPayload()));
    expect(again.status).toBe(204);
    expect(again.headers.get('ratelimit-policy')).toBe(`"authed";q=${t.config.rates.authed};w=60`);
    expect(await t.leads.findByToken(first.apiToken)).toMatchObject({ id: first.id, verified: true, repeatOf: null });
    // The operator sees the repeat as a lead of its own that names the first.
    const listed = await (await t.request('/api/v1/admin/leads?email=known%40', { headers: admin })).json();
    expect(listed.items.map((lead: { id: string; repeatOf: string | null; verified: boolean }) => [lead.id, lead.repeatOf, lead.verified])).toEqual([
      [repeat.id, first.id, false],
      [first.id, null, true],
    ]);
    // A third sign-up of the address is another repeat of the first, not of the repeat.
    const third = await signUpAndScan('known@example.com');
    expect((await t.leads.get(third.id))?.repeatOf).toBe(first.id);
  });

  test('a repeat sign-up cannot take over or lock out the first lead: revoking or rotating it leaves the first one working', async () => {
    const admin = bearer(await t.keyWith('admin'));
    const first = await (await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'owner@example.com' }))).json();
    const repeat = await (await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'owner@example.com' }))).json();
    expect((await t.request(`/api/v1/admin/leads/${repeat.id}/rotate-token`, { method: 'POST', headers: admin })).status).toBe(200);
    expect((await t.request(`/api/v1/admin/leads/${repeat.id}/revoke-token`, { method: 'POST', headers: admin })).status).toBe(200);
    expect((await t.request(TELEMETRY, tokenInit(first.apiToken, scanPayload()))).status).toBe(204);
    // Operators' own tools still refuse a second first lead for a registered address.
    expect((await (await t.request('/api/v1/admin/leads', { headers: admin })).json()).items).toHaveLength(2);
    await expect(t.leads.create('owner@example.com')).rejects.toThrow('a lead with this email already exists');
  });

  test('verify, rotate (old token rejected at once) and revoke through the admin API', async () => {
    const admin = bearer(await t.keyWith('admin'));
    const { id, apiToken } = await (await t.request('/api/v1/public/leads', jsonRequest('POST', { email: 'a@example.com' }))).json();

    const verified = await t.request(`/api/v1/admin/leads/${id}/verify`, { method: 'POST', headers: admin });
    expect(verified.status).toBe(200);
    expect(await verified.json()).toMatchObject({ id, verified: true });
    expect((await t.leads.findByToken(apiToken))?.verified).toBe(true);

    const rotated = await t.request(`/api/v1/admin/leads/${id}/rotate-token`, { method: 'POST', headers: admin });
    expect(rotated.status).toBe(200);
    const { apiToken: next } = await rotated.json();
    expect(next).not.toBe(apiToken);
    expect(await t.leads.findByToken(apiToken)).toBeNull();
    expect((await t.leads.findByToken(next))?.id).toBe(id);

    const revoked = await t.request(`/api/v1/admin/leads/${id}/revoke-token`, { method: 'POST', headers: admin });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id, tokenActive: false });
    expect(await t.leads.findByToken(next)).toBeNull();

    for (const action of ['verify', 'rotate-token', 'revoke-token']) {
      const res = await t.request(`/api/v1/admin/leads/missing/${action}`, { method: 'POST', headers: admin });
      expect(res.status).toBe(404);
    }
  });
});
