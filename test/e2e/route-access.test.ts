import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import path from 'node:path';
import { accessRuleOf, type AccessRule } from '../../src/lib/access.ts';
import { openApiPath } from '../../src/apidocs/document.ts';
import { makeTestApp, tempDir, type TestApp } from '../helpers/app.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

// Issue 27 item 1: who may call a route is decided on the route the router matched, and every route
// says who may call it. These tests hold that for every route the app has, so a route added later is
// covered without being listed here: the walk sends each one, without credentials, under odd Hosts
// and path prefixes, to a real server (the hot routes answered ahead of the app included).

/** One request on a raw socket, so the Host header is exactly what a client sent; the answer's status. */
function rawStatus(port: number, method: string, target: string, host: string | null, body: string | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const lines = [`${method} ${target} HTTP/1.1`, ...(host === null ? [] : [`Host: ${host}`]), 'Connection: close'];
      if (body !== null) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
      // Written, not ended: a client's FIN before the answer makes the server drop a slow one.
      socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
    });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      if (status) resolve(Number(status[1]));
      else reject(new Error(`no status line for ${method} ${target} (Host ${host}): ${JSON.stringify(received.slice(0, 200))}; server stderr ends: ${server.stderr().slice(-1500)}`));
    });
    socket.on('error', reject);
  });
}

let t: TestApp;
let server: SpawnedServer;
let tmp: ReturnType<typeof tempDir>;
let port: number;
/** Every route of the app with its declared rule (what the server serves is the same app). */
let routes: { method: string; path: string; rule: AccessRule | null }[];

beforeAll(async () => {
  t = await makeTestApp();
  routes = t.app.routes.map((route) => ({ method: route.method, path: route.path, rule: accessRuleOf(route) }));
  tmp = tempDir('svc-route-access-');
  server = await spawnServer({ dataDir: path.join(tmp.dir, 'data'), env: { SVC_RATE_ANONYMOUS: '1000000', SVC_RATE_ANONYMOUS_GLOBAL: '10000000', SVC_RATE_WEBHOOK: '1000000' } });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  tmp?.remove();
  t?.close();
});

describe('deny by default: every route declares who may call it', () => {
  test('every route of the app declares an access rule (apiDoc auth, or undocumentedRoute for pages)', () => {
    expect(routes.length).toBeGreaterThan(50);
    expect(routes.filter((route) => route.rule === null).map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  test('a route added without an access rule is refused (403 access_undeclared), whoever calls it', async () => {
    const app = await makeTestApp();
    try {
      app.app.get('/added-without-a-rule', () => 'served').post('/added-without-a-rule', () => 'served');
      for (const [method, headers] of [['GET', {}], ['POST', { authorization: `Bearer ${await app.keyWith('admin')}` }]] as const) {
        const response = await app.request('/added-without-a-rule', { method, headers });
        expect(response.status).toBe(403);
        expect((await response.json()).error).toBe('access_undeclared');
      }
    } finally {
      app.close();
    }
  });
});

describe('the route walk: every route, no credentials, odd Hosts and path prefixes', () => {
  const HOSTS = ['x', 'ab', 'abc', 'abcd', 'x:1', 'ab:1', 'X', 'LOCALHOST', '127.0.0.1', '127.0.0.1:3000', '[::1]', '[::1]:8080', 'localhost'];
  /** Prefixes naming no route: under them a request must never reach one. */
  const STRAY = ['/z', '/zz', '//'];
  /** Prefixes that resolve away: the route itself is reached, and its rule must hold. */
  const RESOLVED = ['/./', '/a/..'];
  /** A route's path with its parameters filled. */
  const filled = (routePath: string) => routePath.replace(/:[^/]+/g, 'x1').replace('*', 'anything');

  test('every route in the OpenAPI document is walked (the walk covers the document and more)', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const walked = new Set(routes.map((route) => `${route.method} ${openApiPath(route.path)}`));
    const documented = Object.entries(document.paths).flatMap(([p, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${p}`));
    expect(documented.length).toBeGreaterThan(40);
    expect(documented.filter((operation) => !walked.has(operation))).toEqual([]);
  });

  test('no protected route answers 2xx (a session route only 204, no session) and nothing answers 5xx; under a stray prefix no route is reached at all', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const route of routes) {
      const body = route.method === 'GET' || route.method === 'HEAD' || route.method === 'OPTIONS' ? null : '{}';
      const routePath = filled(route.path);
      // A session route answers everyone, a caller without a live session only with 204 (no session).
      const sessionRoute = route.rule?.auth === 'session';
      const protectedRoute = route.rule?.auth !== 'public' && !sessionRoute;
      const targets = [
        ...[routePath, ...RESOLVED.map((prefix) => `${prefix}${routePath.slice(1)}`)].map((target) => ({ target, stray: false })),
        ...STRAY.map((prefix) => ({ target: `${prefix}${routePath}`, stray: true })),
      ];
      for (const host of HOSTS) {
        for (const { target, stray } of targets) {
          const status = await rawStatus(port, route.method, target, host, body);
          sent++;
          const what = `${route.method} ${target} (Host ${host}, route ${route.path}, ${route.rule?.auth}) -> ${status}`;
          if (status >= 500) failures.push(`5xx: ${what}`);
          else if (stray && status < 400) failures.push(`stray prefix reached a route: ${what}`);
          else if (protectedRoute && status >= 200 && status < 300) failures.push(`protected route answered without credentials: ${what}`);
          else if (sessionRoute && status >= 200 && status < 300 && status !== 204) failures.push(`session route answered more than "no session" without credentials: ${what}`);
        }
      }
    }
    expect(sent).toBeGreaterThan(routes.length * HOSTS.length * 5);
    expect(failures).toEqual([]);
  }, 120_000);

  test('the attack of issue 27: a 1-character Host and a /zz prefix mint no admin key, list none, read no scans', async () => {
    const body = JSON.stringify({ scopes: ['admin'] });
    for (const host of ['x', 'ab', 'abc', 'x:1']) {
      expect(await rawStatus(port, 'POST', '/zz/api/v1/admin/keys', host, body)).toBe(404);
      expect(await rawStatus(port, 'GET', '/zz/api/v1/admin/keys', host, null)).toBe(404);
      expect(await rawStatus(port, 'GET', '/zz/api/v1/dashboard/scans', host, null)).toBe(404);
      expect(await rawStatus(port, 'POST', '/api/v1/admin/keys', host, body)).toBe(401);
      expect(await rawStatus(port, 'POST', '/zz/api/v1/probe/telemetry', host, '{"hostname":"a.example","signals":{}}')).toBe(404);
      expect(await rawStatus(port, 'POST', '/api/v1/probe/telemetry', host, '{"hostname":"a.example","signals":{}}')).toBe(401);
    }
  });
});

describe('Hosts that are not a host[:port] are refused before routing', () => {
  test('400 invalid_host for any path, public or not; a valid Host of any length is served', async () => {
    for (const host of ['a/b', 'a b', '', '..', 'a:b:c', 'x%2fy', 'a:99999', '-a', 'evil@x', 'a?b', '[::g]', `${'a'.repeat(64)}.example`]) {
      for (const target of ['/healthz', '/api/v1/admin/keys', '/embed.js']) {
        expect({ host, target, status: await rawStatus(port, 'GET', target, host, null) }).toEqual({ host, target, status: 400 });
      }
    }
    for (const host of ['x', 'svc', 'x:1', 'svc_1.internal', '[::1]:80', '192.0.2.1:65535', 'xn--bcher-kva.example']) {
      expect({ host, status: await rawStatus(port, 'GET', '/healthz', host, null) }).toEqual({ host, status: 200 });
    }
  });

  test('the 400 is JSON naming the rule', async () => {
    const response = await fetch(`${server.url}/healthz`, { headers: { host: 'a:b:c' } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_host', detail: 'the Host header must be a host name or IP address with an optional port (host[:port])' });
  });
});
