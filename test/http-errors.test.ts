import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp({ env: { SVC_MAX_BODY_BYTES: '2048' } });
});
afterEach(() => t.close());

describe('error shape', () => {
  test('unknown routes get a JSON 404', async () => {
    const res = await t.request('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ error: 'not_found', detail: 'no route for GET /api/v1/nothing-here' });
  });

  test('malformed JSON is 400 malformed_json', async () => {
    const res = await t.request('/api/v1/public/leads', { method: 'POST', body: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'malformed_json' });
  });

  test('a non-JSON media type is 415', async () => {
    const res = await t.request('/api/v1/public/leads', { method: 'POST', body: 'email=a@b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ error: 'unsupported_media_type' });
  });

  test('a missing required field is 400 naming it', async () => {
    const res = await t.request('/api/v1/public/leads', jsonRequest('POST', {}));
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toBe('invalid_request');
    expect(body.detail).toContain('email');
  });
});

describe('body size limit (SVC_MAX_BODY_BYTES)', () => {
  test('413 for a declared body over the limit, before it is read; the caller is admitted first (without credentials: 401)', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(3000), scopes: ['admin'] });
    const send = (headers: Record<string, string>) =>
      t.request('/api/v1/admin/keys', { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers } });
    const res = await send(bearer(await t.keyWith('admin')));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large' });
    expect((await send({})).status).toBe(401);
  });

  test('413 for a streamed body without Content-Length once it passes the limit, nothing stored', async () => {
    const admin = await t.keyWith('admin');
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // An endless body: the server must stop reading at the limit, not buffer it all.
        sent += 512;
        if (sent > 1_000_000) return controller.close();
        controller.enqueue(new TextEncoder().encode(sent === 512 ? '{"name":"' + 'x'.repeat(503) : 'x'.repeat(512)));
      },
    });
    const res = await t.request('/api/v1/admin/keys', { method: 'POST', body, headers: { 'content-type': 'application/json', ...bearer(admin) } });
    expect(res.status).toBe(413);
    expect(sent).toBeLessThan(10_000);
    expect(await t.keys.list()).toHaveLength(1);
  });

  test('a body at the limit is accepted', async () => {
    const admin = bearer(await t.keyWith('admin'));
    const base = JSON.stringify({ name: '', scopes: ['admin'] });
    const name = 'n'.repeat(100);
    const res = await t.request('/api/v1/admin/keys', { method: 'POST', body: JSON.stringify({ name, scopes: ['admin'] }).padEnd(2048, ' '), headers: { 'content-type': 'application/json', ...admin } });
    expect(base.length).toBeLessThan(2048);
    expect(res.status).toBe(201);
  });
});

describe('path handling: access follows the route the router matched', () => {
  test('encoded, doubled, differently cased or dotted admin paths never skip the admin guard', async () => {
    const cases: [string, number][] = [
      ['/api/v1/admin/keys', 401],
      ['/api/v1/admin/keys/', 401],
      ['/api/v1/x/../admin/keys', 401],
      ['/api/v1/probe/../admin/keys', 401],
      ['/api/v1/admin/keys?x=/api/v1/public/', 401],
      // The router routes none of these: they reach no route at all, so nothing about them is
      // decided but the 404 (test/e2e/route-access.test.ts walks every route this way).
      ['/api/v1/%61dmin/keys', 404],
      ['/api/v1/admin%2Fkeys', 404],
      ['/api/v1//admin/keys', 404],
      ['/api/v1/ADMIN/keys', 404],
    ];
    for (const [path, status] of cases) {
      const res = await t.request(path);
      expect([path, res.status]).toEqual([path, status]);
    }
  });
});

describe('a known path with a method it does not answer (issue 27)', () => {
  test('is 405 with Allow naming the methods it answers; an unknown path stays 404', async () => {
    const cases: [string, string, string][] = [
      ['PUT', '/api/v1/admin/keys', 'GET, HEAD, POST'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['PATCH', '/api/v1/admin/keys/key_1', 'DELETE'],
      ['GET', '/api/v1/probe/telemetry', 'POST'],
      ['DELETE', '/api/v1/admin/stores/', 'GET, HEAD, POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await t.request(path, { method });
      expect({ method, path, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, path, status: 405, allow });
      expect(await res.json()).toEqual({ error: 'method_not_allowed', detail: `${path} answers ${allow}, not ${method}` });
    }
    const unknown = await t.request('/api/v1/admin/nothing', { method: 'PUT' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('allow')).toBeNull();
  });
});
