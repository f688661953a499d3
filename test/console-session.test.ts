import { afterEach, describe, expect, test } from 'bun:test';
import { sha256Hex } from '../src/lib/crypto.ts';
import { fixedClock } from '../src/lib/clock.ts';
import { jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';

// The console's session exchange and how a session cookie authorizes the admin and dashboard API.
// svc's own origin is its base URL, by default http://127.0.0.1:3000 (test/own-origin.test.ts has
// how it is derived: never from the request's Host).
const SAME = { origin: 'http://127.0.0.1:3000' };
const EVIL = { origin: 'http://evil.test' };
const HOUR = 3_600_000;

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function signIn(key: string, headers: Record<string, string> = SAME): Promise<Response> {
  return t.request('/api/v1/console/session', jsonRequest('POST', { key }, headers));
}

/** Sign in and return the `name=value` pair to send back as Cookie. */
async function session(key: string): Promise<string> {
  const res = await signIn(key);
  expect(res.status).toBe(201);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

const withCookie = (cookie: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), cookie } });

describe('console sign-in', () => {
  test('exchanges a key for an HttpOnly SameSite=Strict cookie on path /, not Secure over http', async () => {
    t = await makeTestApp();
    const key = await t.keyWith('admin');
    const res = await signIn(key);
    expect(res.status).toBe(201);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^svc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toMatchObject({ key: { scopes: ['admin'], name: 'test' }, idleMinutes: 720 });
    expect(JSON.stringify(body)).not.toContain(key);
  });

  test('the cookie is Secure and __Host- prefixed when the base URL is https', async () => {
    t = await makeTestApp({ env: { SVC_BASE_URL: 'https://svc.example.com' } });
    const res = await signIn(await t.keyWith('admin'), { origin: 'https://svc.example.com' });
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).toMatch(/^__Host-svc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
  });

  test('the session id is stored only as its SHA-256', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    const raw = cookie.split('=')[1]!;
    const rows = await t.query('SELECT * FROM console_sessions');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id_hash).toBe(sha256Hex(raw));
    expect(JSON.stringify(rows)).not.toContain(raw);
  });

  test('an unknown key is 401, a key without admin or dashboard:read is 403; neither gets a cookie', async () => {
    t = await makeTestApp();
    const unknown = await signIn(`sk_live_${'a'.repeat(43)}`);
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toBe('invalid_api_key');
    const widget = await signIn(await t.keyWith('probe:scan', 'metrics:read'));
    expect(widget.status).toBe(403);
    expect((await widget.json()).error).toBe('insufficient_scope');
    expect(unknown.headers.get('set-cookie')).toBeNull();
    expect(widget.headers.get('set-cookie')).toBeNull();
  });

  test('sign-in from another origin, or without Origin, is refused (login CSRF)', async () => {
    t = await makeTestApp();
    const key = await t.keyWith('admin');
    for (const headers of [EVIL, {}]) {
      const res = await signIn(key, headers);
      expect(res.status).toBe(403);
      expect((await res.json()).error).toBe('cross_origin_refused');
    }
    expect(await t.query('SELECT count(*) AS n FROM console_sessions')).toEqual([{ n: 0 }]);
  });

  test('sign-in attempts are rate limited per client like anonymous sign-ups', async () => {
    t = await makeTestApp({ env: { SVC_RATE_ANONYMOUS: '3' } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await signIn(`sk_live_${'b'.repeat(43)}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});

describe('console session authorizes the API like its key', () => {
  test('an admin session reads admin endpoints and, same-origin, changes things', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    expect((await t.request('/api/v1/admin/keys', withCookie(cookie))).status).toBe(200);
    const created = await t.request('/api/v1/admin/keys', withCookie(cookie, jsonRequest('POST', { scopes: ['probe:scan'] }, SAME)));
    expect(created.status).toBe(201);
  });

  test('a dashboard:read session sees the dashboard and gets 403 from admin endpoints', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('dashboard:read'));
    expect((await t.request('/api/v1/dashboard/scans', withCookie(cookie))).status).toBe(200);
    const admin = await t.request('/api/v1/admin/keys', withCookie(cookie));
    expect(admin.status).toBe(403);
    expect((await admin.json()).error).toBe('insufficient_scope');
  });

  test('a cross-origin POST with the cookie is refused and changes nothing', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    for (const headers of [EVIL, {}, { origin: 'null' }]) {
      const res = await t.request('/api/v1/admin/keys', withCookie(cookie, jsonRequest('POST', { scopes: ['admin'] }, headers)));
      expect(res.status).toBe(403);
      expect((await res.json()).error).toBe('cross_origin_refused');
    }
    expect(await t.keys.list()).toHaveLength(1);
  });

  test('a read the browser marks cross-site is refused', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    const res = await t.request('/api/v1/admin/keys', withCookie(cookie, { headers: { 'sec-fetch-site': 'cross-site' } }));
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe('cross_origin_refused');
  });

  test('the base URL origin counts as same-origin too', async () => {
    t = await makeTestApp({ env: { SVC_BASE_URL: 'https://svc.example.com' } });
    const res = await signIn(await t.keyWith('admin'), { origin: 'https://svc.example.com' });
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const created = await t.request('/api/v1/admin/keys', withCookie(cookie, jsonRequest('POST', { scopes: ['probe:scan'] }, { origin: 'https://svc.example.com' })));
    expect(created.status).toBe(201);
  });

  test('an Authorization header wins over the cookie', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    const res = await t.request('/api/v1/admin/keys', withCookie(cookie, { headers: { authorization: `Bearer sk_live_${'c'.repeat(43)}` } }));
    expect(res.status).toBe(401);
  });

  test('revoking the key ends its sessions at once', async () => {
    t = await makeTestApp();
    const admin = await t.keys.create({ scopes: ['admin'], name: 'ops' });
    const cookie = await session(admin.key);
    await t.keys.revoke(admin.record.id);
    const res = await t.request('/api/v1/admin/keys', withCookie(cookie));
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe('session_expired');
    // Asking who is signed in is answered, not refused: no live session, and its cookie is cleared.
    const who = await t.request('/api/v1/console/session', withCookie(cookie));
    expect(who.status).toBe(204);
    expect(who.headers.get('set-cookie')).toBe('svc_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
    expect(await t.query('SELECT count(*) AS n FROM console_sessions')).toEqual([{ n: 0 }]);
  });

  test('an idle session expires after 12 hours; use keeps it alive', async () => {
    const clock = fixedClock(Date.UTC(2026, 0, 10));
    t = await makeTestApp({ clock });
    const cookie = await session(await t.keyWith('admin'));
    clock.advance(11 * HOUR);
    expect((await t.request('/api/v1/admin/keys', withCookie(cookie))).status).toBe(200);
    clock.advance(11 * HOUR);
    expect((await t.request('/api/v1/admin/keys', withCookie(cookie))).status).toBe(200);
    clock.advance(12 * HOUR + 1);
    const expired = await t.request('/api/v1/admin/keys', withCookie(cookie));
    expect(expired.status).toBe(401);
    expect((await expired.json()).error).toBe('session_expired');
  });

  test('SVC_SESSION_IDLE_MINUTES sets the idle timeout', async () => {
    const clock = fixedClock(Date.UTC(2026, 0, 10));
    t = await makeTestApp({ clock, env: { SVC_SESSION_IDLE_MINUTES: '5' } });
    const cookie = await session(await t.keyWith('admin'));
    clock.advance(5 * 60_000 + 1);
    expect((await t.request('/api/v1/admin/keys', withCookie(cookie))).status).toBe(401);
  });

  test('asking who is signed in without a session is 204 (not an error), and the answer names the session’s key', async () => {
    t = await makeTestApp();
    const none = await t.request('/api/v1/console/session');
    expect(none.status).toBe(204);
    expect(none.headers.get('set-cookie')).toBeNull();
    expect(none.headers.get('cache-control')).toBe('no-store');
    expect(await none.text()).toBe('');
    const malformed = await t.request('/api/v1/console/session', withCookie('svc_session=not-a-session'));
    expect(malformed.status).toBe(204);
    const admin = await t.keys.create({ scopes: ['admin'], name: 'ops' });
    const who = await t.request('/api/v1/console/session', withCookie(await session(admin.key)));
    expect(who.status).toBe(200);
    expect((await who.json()).key).toMatchObject({ id: admin.record.id, name: 'ops' });
  });

  test('asking who is signed in from another site with the cookie is still refused', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    const res = await t.request('/api/v1/console/session', withCookie(cookie, { headers: { 'sec-fetch-site': 'cross-site' } }));
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe('cross_origin_refused');
  });

  test('sign-out ends the session and clears the cookie', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    const who = await t.request('/api/v1/console/session', withCookie(cookie));
    expect(who.status).toBe(200);
    expect((await who.json()).key.scopes).toEqual(['admin']);
    const out = await t.request('/api/v1/console/session', withCookie(cookie, { method: 'DELETE', headers: SAME }));
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toBe('svc_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
    expect((await t.request('/api/v1/admin/keys', withCookie(cookie))).status).toBe(401);
  });

  test('sign-out from another origin is refused', async () => {
    t = await makeTestApp();
    const cookie = await session(await t.keyWith('admin'));
    const out = await t.request('/api/v1/console/session', withCookie(cookie, { method: 'DELETE', headers: EVIL }));
    expect(out.status).toBe(403);
    expect((await t.request('/api/v1/admin/keys', withCookie(cookie))).status).toBe(200);
  });
});
