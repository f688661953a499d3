import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(() => t.close());

describe('GET /embed.js', () => {
  test('serves the bundled widget as JavaScript with caching headers', async () => {
    const res = await t.request('/embed.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get('cache-control')).toContain('max-age=');
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
    const js = await res.text();
    // A minified IIFE: one line, no module syntax, no source comments.
    expect(js.startsWith('(()=>{')).toBe(true);
    expect(js.trim().split('\n')).toHaveLength(1);
    expect(js).not.toContain('import ');
    expect(js).not.toContain('/*');
  });

  test('the widget fits the 5 KB minified + gzipped budget', async () => {
    const res = await t.request('/embed.js', { headers: { 'accept-encoding': 'gzip' } });
    const size = (await res.arrayBuffer()).byteLength;
    expect(size).toBeLessThanOrEqual(5 * 1024);
  });

  test('If-None-Match with the ETag gets 304 and no body', async () => {
    const etag = (await t.request('/embed.js')).headers.get('etag')!;
    const res = await t.request('/embed.js', { headers: { 'if-none-match': etag } });
    expect(res.status).toBe(304);
    expect(await res.text()).toBe('');
    expect(res.headers.get('etag')).toBe(etag);
    const stale = await t.request('/embed.js', { headers: { 'if-none-match': '"something-else"' } });
    expect(stale.status).toBe(200);
  });

  test('gzip when accepted, identical once decompressed', async () => {
    const plain = await (await t.request('/embed.js')).text();
    const res = await t.request('/embed.js', { headers: { 'accept-encoding': 'br, gzip;q=0.8' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(new TextDecoder().decode(Bun.gunzipSync(bytes))).toBe(plain);
    const refused = await t.request('/embed.js', { headers: { 'accept-encoding': 'gzip;q=0' } });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });
});
