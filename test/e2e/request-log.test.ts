import { describe, expect, test } from 'bun:test';
import net from 'node:net';
import path from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { TELEMETRY, scanPayload, signedHeaders } from '../helpers/probe.ts';
import { serversPerTest } from '../helpers/server.ts';
import { signedPlatformADelivery } from '../helpers/signals.ts';

const servers = serversPerTest('svc-log-');
const SPAWNS_TIMEOUT = 30_000;
const keyWith = async (...scopes: string[]) => (await runCli(['keys', 'create', '--scopes', scopes.join(','), '--data-dir', servers.dataDir])).json.key as string;
const logLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** POST `head` and part of a body, then hang up: an upload aborted by the client. */
async function abortedUpload(url: string, pathAndQuery: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`POST ${pathAndQuery} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"hostname":`);
  await Bun.sleep(50);
  socket.destroy();
}

describe('request log of a running server', () => {
  test('every auth mode leaves its line, and no key, token, signature, secret or body ever appears', async () => {
    const admin = await keyWith('admin');
    const dashboard = await keyWith('dashboard:read');
    const metrics = await keyWith('metrics:read');
    const signing = await keyWith('probe:scan');
    const server = await servers.start();
    const url = server.url;
    const secrets: string[] = [admin, dashboard, metrics, signing];
    const call = (p: string, init: RequestInit = {}) => fetch(`${url}${p}`, init);
    const json = (method: string, body: unknown, headers: Record<string, string> = {}) => ({ method, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

    // Admin bearer; the new key and the store's access token are in bodies only.
    const created = await (await call('/api/v1/admin/keys', json('POST', { scopes: ['probe:scan'], name: 'made-by-api' }, { authorization: `Bearer ${admin}` }))).json();
    secrets.push(created.key);
    const storeToken = 'permanent-store-token-0123456789';
    secrets.push(storeToken);
    const store = await (
      await call('/api/v1/admin/stores', json('POST', { platform: 'platform-a', domain: 'logshop.myplatform-a.com', currency: 'EUR', credentials: { accessToken: storeToken } }, { authorization: `Bearer ${admin}` }))
    ).json();
    expect(store.id).toEqual(expect.any(String));
    const widget = await (
      await call('/api/v1/admin/keys', json('POST', { scopes: ['products:read'], allowedDomains: ['shop.example.com'], storeId: store.id }, { authorization: `Bearer ${admin}` }))
    ).json();
    secrets.push(widget.key);
    // A console session: the key is exchanged for a cookie, which then authorizes same-origin calls.
    const signIn = await call('/api/v1/console/session', json('POST', { key: admin }, { origin: url }));
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    secrets.push(cookie.slice(cookie.indexOf('=') + 1));
    expect((await call('/api/v1/admin/leads', { headers: { cookie, origin: url } })).status).toBe(200);
    // Dashboard and metrics keys.
    expect((await call('/api/v1/dashboard/scans', { headers: { authorization: `Bearer ${dashboard}` } })).status).toBe(200);
    expect((await call('/metrics', { headers: { authorization: `Bearer ${metrics}` } })).status).toBe(200);
    // Mode 1: a lead token from the public sign-up.
    const lead = await (await call('/api/v1/public/leads', json('POST', { email: 'logged@example.com' }))).json();
    secrets.push(lead.apiToken);
    const bodyMarker = 'body-marker-that-must-never-be-logged';
    expect((await call(TELEMETRY, json('POST', scanPayload({ note: bodyMarker }), { 'x-probe-token': lead.apiToken }))).status).toBe(204);
    // Mode 2: a signed key.
    const signedBody = JSON.stringify(scanPayload({ note: bodyMarker }));
    const headers = signedHeaders(signing, signedBody, Date.now());
    secrets.push(headers['x-probe-signature']!);
    expect((await call(TELEMETRY, { method: 'POST', body: signedBody, headers })).status).toBe(204);
    // A wrong signature and a wrong token are logged as failures, without the values.
    const forged = signedHeaders(signing, signedBody, Date.now());
    const forgedSignature = forged['x-probe-signature']!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
    secrets.push(forgedSignature);
    expect((await call(TELEMETRY, { method: 'POST', body: signedBody, headers: { ...forged, 'x-probe-signature': forgedSignature } })).status).toBe(401);
    // The widget key, with a query string carrying a secret-looking value.
    const queryMarker = 'query-marker-that-must-never-be-logged';
    await call(`/api/v1/public/faqs?type=product&ref=${queryMarker}`, { headers: { 'x-api-key': widget.key, origin: 'https://shop.example.com' } });
    // A signed webhook delivery.
    const delivery = signedPlatformADelivery('webhook-secret-value', 'logshop.myplatform-a.com', 'products/update', { id: 1, note: bodyMarker });
    secrets.push((delivery.headers as Record<string, string>)['X-Platform-A-Hmac-Sha256']!);
    expect((await call('/api/v1/webhooks/platform-a', delivery)).status).toBe(401);
    expect(await server.stop('SIGTERM')).toBe(0);

    const stderr = server.stderr();
    for (const secret of [...secrets, bodyMarker, queryMarker, 'webhook-secret-value']) expect(stderr).not.toContain(secret);
    const lines = logLines(stderr).filter((line) => line.msg === 'request');
    expect(lines).toHaveLength(13);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(
        ['ts', 'level', 'msg', 'method', 'route', 'status', 'ms', 'reqBytes', 'requestId', ...(line.tier ? ['tier'] : []), ...(line.error ? ['error'] : [])].sort(),
      );
      expect(String(line.route)).not.toContain('?');
    }
    const probes = lines.filter((line) => line.route === TELEMETRY);
    expect(probes.map((line) => [line.status, line.tier, line.error ?? null])).toEqual([
      [204, 'anonymous', null], // an unverified lead's token: anonymous tier
      [204, 'agent', null],
      [401, 'agent', 'invalid_signature'],
    ]);
    expect(lines.find((line) => line.route === '/api/v1/public/faqs')).toMatchObject({ method: 'GET', status: 200 });
    expect(lines.find((line) => line.route === '/api/v1/webhooks/platform-a')).toMatchObject({ status: 401, error: 'unverified_webhook' });
  }, SPAWNS_TIMEOUT);

  test('an upload the client aborts is a 499 warning line, not an error', async () => {
    const server = await servers.start();
    await abortedUpload(server.url, TELEMETRY);
    await abortedUpload(server.url, '/api/v1/public/leads');
    await Bun.sleep(300);
    expect(await server.stop('SIGTERM')).toBe(0);
    const lines = logLines(server.stderr());
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    // The request lines (on PostgreSQL the server also says it leads its instances).
    expect(lines.filter((line) => line.msg === 'request').map((line) => [line.level, line.route, line.status, line.error])).toEqual([
      ['warn', TELEMETRY, 499, 'client_closed_request'],
      ['warn', '/api/v1/public/leads', 499, 'client_closed_request'],
    ]);
  }, SPAWNS_TIMEOUT);

  test('one client flooding errors and aborted uploads cannot write more than the line budget', async () => {
    const budget = 20;
    const server = await servers.start({ env: { SVC_LOG_RATE: String(budget) } });
    const url = server.url;
    const started = performance.now();
    let sent = 0;
    for (let round = 0; round < 40; round++) {
      const batch: Promise<unknown>[] = [];
      for (let i = 0; i < 50; i++) batch.push(fetch(`${url}/random/${round}/${i}/${Math.random()}`).then((res) => res.arrayBuffer()));
      batch.push(abortedUpload(url, TELEMETRY));
      await Promise.all(batch);
      sent += 51;
    }
    const seconds = (performance.now() - started) / 1000;
    const metrics = await keyWith('metrics:read');
    const scraped = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metrics}` } })).text();
    expect(await server.stop('SIGTERM')).toBe(0);

    const lines = logLines(server.stderr());
    const requestLines = lines.filter((line) => line.msg === 'request');
    // The budget refills at `budget` lines per second from a full bucket of `budget`.
    expect(requestLines.length).toBeLessThanOrEqual(Math.ceil(budget * (seconds + 2)));
    expect(requestLines.length).toBeLessThan(sent / 4);
    const suppressed = lines.filter((line) => line.msg === 'log lines suppressed').reduce((n, line) => n + Number(line.suppressed), 0);
    expect(requestLines.length + suppressed).toBeGreaterThanOrEqual(sent);
    expect(Number(/^svc_log_lines_suppressed_total (\d+)$/m.exec(scraped)?.[1])).toBeGreaterThan(0);
    expect(server.stderr().length / seconds).toBeLessThan(budget * 400 * 2);
  }, SPAWNS_TIMEOUT);
});
