import { afterEach, describe, expect, test } from 'bun:test';
import { undocumentedRoute } from '../src/lib/access.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';

// An access check that must ask storage (a key the app has not verified in memory yet, a console
// session) answers with a promise (src/lib/access.ts). The routes whose check may do so wait for
// it, whether or not they parse a body; any other route that meets such an answer is refused,
// never served unadmitted. Keys made by the test's own key store are unknown to the app's memory,
// so each one's first use is such a lookup.
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe('access checks answered from storage', () => {
  test('a route waits for the check: at its first use a valid key is served, a revoked one refused before the body is read', async () => {
    t = await makeTestApp();
    expect((await t.request('/api/v1/admin/keys', { headers: bearer(await t.keyWith('admin')) })).status).toBe(200);
    const revoked = await t.keys.create({ scopes: ['admin'] });
    await t.keys.revoke(revoked.record.id);
    const listed = await t.request('/api/v1/admin/keys', { headers: bearer(revoked.key) });
    expect(listed.status).toBe(401);
    // A JSON route admits its caller before reading the body: the malformed body is never parsed.
    const created = await t.request('/api/v1/admin/keys', { method: 'POST', body: '{"scopes":', headers: { ...bearer(revoked.key), 'content-type': 'application/json' } });
    expect(created.status).toBe(401);
    expect(((await created.json()) as { error: string }).error).toBe('invalid_api_key');
  });

  test('a route that does not wait for a check answered from storage is refused (500), not served', async () => {
    t = await makeTestApp();
    t.app.get('/added-outside-the-waiting-routes', () => 'served', { detail: undocumentedRoute({ auth: 'admin' }) });
    const admin = await t.keyWith('admin');
    // The key's own commit heard (on PostgreSQL its notification comes a few ms later, and would empty the cache the lookup below fills).
    await t.changesHeard();
    const res = await t.request('/added-outside-the-waiting-routes', { headers: bearer(admin) });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('served');
    // Once the key is verified in memory (a waiting route waits for its lookup, which on PostgreSQL
    // may still be on its way), the check answers at once and the route is served.
    expect((await t.request('/api/v1/admin/keys', { headers: bearer(admin) })).status).toBe(200);
    expect((await t.request('/added-outside-the-waiting-routes', { headers: bearer(admin) })).status).toBe(200);
  });

  test('a console session (always looked up in storage) is waited for on the routes it opens', async () => {
    t = await makeTestApp();
    const signIn = await t.request('/api/v1/console/session', jsonRequest('POST', { key: await t.keyWith('dashboard:read') }, { origin: t.config.baseUrl }));
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    expect((await t.request('/api/v1/dashboard/scans', { headers: { cookie } })).status).toBe(200);
    expect((await t.request('/api/v1/admin/keys', { headers: { cookie } })).status).toBe(403);
  });
});
