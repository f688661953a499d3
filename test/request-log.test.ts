import { afterEach, describe, expect, test } from 'bun:test';
import { ERROR_CODE_HEADER } from '../src/lib/errors.ts';
import { createLogger, type LogSettings } from '../src/observability/log.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';

const settings = (overrides: Partial<LogSettings> = {}): LogSettings => ({ level: 'info', access: 'all', linesPerSecond: 10, ...overrides });

function capture(overrides: Partial<LogSettings> = {}) {
  let now = 1_000_000;
  let text = '';
  const logger = createLogger(settings(overrides), (chunk) => (text += chunk), () => now);
  return {
    logger,
    advance: (ms: number) => (now += ms),
    lines: () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('log line budget', () => {
  test('a flood writes at most the budget per second; the next line written says how many were dropped', () => {
    const log = capture();
    for (let i = 0; i < 1000; i++) log.logger.access(404, () => ({ n: i }));
    expect(log.lines()).toHaveLength(10);
    expect(log.logger.suppressedTotal).toBe(990);
    log.advance(1000);
    log.logger.access(200, () => ({ n: 'later' }));
    const [summary, line] = log.lines().slice(10);
    expect(summary).toMatchObject({ level: 'warn', msg: 'log lines suppressed', suppressed: 990, linesPerSecond: 10 });
    expect(line).toMatchObject({ level: 'info', msg: 'request', n: 'later' });
  });

  test('access fields are only built for admitted lines', () => {
    const log = capture();
    let built = 0;
    for (let i = 0; i < 500; i++) log.logger.access(200, () => ({ n: built++ }));
    expect(built).toBe(10);
  });

  test('server errors have a budget of their own: a flood of client errors never hides them', () => {
    const log = capture();
    for (let i = 0; i < 100; i++) log.logger.access(429, () => ({}));
    log.logger.log('error', 'unhandled error', { error: 'boom' });
    log.logger.access(500, () => ({ error: 'internal_error' }));
    expect(log.lines().filter((line) => line.level === 'error')).toHaveLength(2);
  });

  test('flush reports what is still counted (at shutdown)', () => {
    const log = capture({ linesPerSecond: 1 });
    log.logger.access(404, () => ({}));
    log.logger.access(404, () => ({}));
    log.logger.flush();
    expect(log.lines().at(-1)).toMatchObject({ msg: 'log lines suppressed', suppressed: 1 });
    log.logger.flush();
    expect(log.lines()).toHaveLength(2);
  });

  test('SVC_ACCESS_LOG and SVC_LOG_LEVEL select the lines', () => {
    const errorsOnly = capture({ access: 'errors' });
    errorsOnly.logger.access(200, () => ({ s: 200 }));
    errorsOnly.logger.access(404, () => ({ s: 404 }));
    expect(errorsOnly.lines().map((l) => l.s)).toEqual([404]);

    const off = capture({ access: 'off' });
    off.logger.access(200, () => ({ s: 200 }));
    off.logger.access(404, () => ({ s: 404 }));
    off.logger.access(503, () => ({ s: 503 }));
    expect(off.lines().map((l) => l.s)).toEqual([503]);

    const quiet = capture({ level: 'error' });
    quiet.logger.access(200, () => ({ s: 200 }));
    quiet.logger.access(401, () => ({ s: 401 }));
    quiet.logger.log('warn', 'a warning');
    quiet.logger.access(500, () => ({ s: 500 }));
    expect(quiet.lines().map((l) => [l.level, l.s])).toEqual([['error', 500]]);
  });
});

describe('request log through the app', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  test('one line per request: method, route template, status, duration, request bytes, tier, request id, error code', async () => {
    t = await makeTestApp();
    const key = await t.keyWith('admin');
    await t.request('/api/v1/admin/leads/0190a5d2-no-such-lead/verify', { method: 'POST', headers: bearer(key) });
    await t.request('/api/v1/probe/telemetry', { method: 'POST', body: '{"hostname":"a.example"}', headers: { 'x-probe-token': 'unknown-token'.repeat(4), 'content-length': '24' } });
    await t.request('/healthz');
    const [verify, probe, health] = t.logLines();
    expect(verify).toEqual({
      ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: 'warn',
      msg: 'request',
      method: 'POST',
      route: '/api/v1/admin/leads/:id/verify',
      status: 404,
      ms: expect.any(Number),
      reqBytes: null,
      requestId: expect.any(String),
      error: 'not_found',
    });
    expect(probe).toMatchObject({ route: '/api/v1/probe/telemetry', status: 401, reqBytes: 24, tier: 'anonymous', error: 'invalid_token' });
    expect(health).toMatchObject({ level: 'info', route: '/healthz', status: 200 });
    expect(health).not.toHaveProperty('error');
    expect(health).not.toHaveProperty('tier');
  });

  test('requests refused by their route\'s access rule are logged under its template; unknown paths and odd Hosts as "unmatched"', async () => {
    t = await makeTestApp();
    await t.request('/api/v1/admin/stores/abc/products'); // 401 from the route's access check
    await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: 'nope' })); // 401 from its JSON parse hook, before the body is read
    await t.request('/api/v1/admin/no/such/thing'); // no such route
    await t.request('http://x/zz/api/v1/admin/keys'); // a 1-character Host, as Bun builds the URL
    expect(t.logLines().map((line) => [line.route, line.status, line.error])).toEqual([
      ['/api/v1/admin/stores/:id/products', 401, 'unauthorized'],
      ['/api/v1/admin/keys', 401, 'unauthorized'],
      ['unmatched', 404, 'not_found'],
      ['unmatched', 404, 'not_found'],
    ]);
  });

  test('X-Request-Id: a sane one is echoed, anything else is replaced by a generated one', async () => {
    t = await makeTestApp();
    const echoed = await t.request('/healthz', { headers: { 'x-request-id': 'trace-01J9ZXK:abc' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-01J9ZXK:abc');
    const generated = [await t.request('/healthz'), await t.request('/healthz', { headers: { 'x-request-id': 'has "quotes" and spaces' } }), await t.request('/healthz', { headers: { 'x-request-id': 'x'.repeat(129) } })];
    const ids = generated.map((res) => res.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{8}-[0-9a-z]+$/);
    expect(new Set(ids).size).toBe(3);
    expect(t.logLines().map((line) => line.requestId)).toEqual(['trace-01J9ZXK:abc', ...ids]);
  });

  test('the error code reaches the log but never the client', async () => {
    t = await makeTestApp();
    const responses = [
      await t.request('/api/v1/admin/keys'), // early, from the scope guard
      await t.request('/nowhere'), // the not-found handler
      await t.request('/api/v1/admin/keys', jsonRequest('POST', { scopes: ['nope'] }, bearer(await t.keyWith('admin')))), // thrown in a route
      await t.request('/api/v1/public/probe/badge'), // thrown while parsing the query
    ];
    for (const res of responses) expect(res.headers.has(ERROR_CODE_HEADER)).toBe(false);
    expect(t.logLines().map((line) => line.error)).toEqual(['unauthorized', 'not_found', 'invalid_request', 'invalid_query']);
  });

  test('an unexpected failure is a 500 with an error line that carries the request id', async () => {
    t = await makeTestApp();
    const key = await t.keyWith('admin');
    await t.query('ALTER TABLE api_keys RENAME TO api_keys_gone'); // every query of the keys now throws, on either engine
    await t.changesHeard();
    const res = await t.request('/api/v1/admin/keys', { headers: bearer(key) });
    expect(res.status).toBe(500);
    const [failure, line] = t.logLines();
    expect(failure).toMatchObject({ level: 'error', msg: 'unhandled error', requestId: res.headers.get('x-request-id'), error: expect.any(String) });
    expect(line).toMatchObject({ level: 'error', status: 500, error: 'internal_error', route: '/api/v1/admin/keys' });
  });

  test('SVC_ACCESS_LOG=errors logs only failed requests', async () => {
    t = await makeTestApp({ env: { SVC_ACCESS_LOG: 'errors' } });
    await t.request('/healthz');
    await t.request('/nowhere');
    expect(t.logLines().map((line) => line.status)).toEqual([404]);
  });
});
