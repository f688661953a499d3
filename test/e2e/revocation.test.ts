import { afterEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { onceHeard, queryDataDir } from '../helpers/engine.ts';
import { scanPayload } from '../helpers/probe.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

// Issue 12 item 3: whatever the server keeps in memory about keys and tokens, a revocation made by
// the CLI in another process is refused on the very next request (on SQLite; on PostgreSQL the
// server hears of it by NOTIFY, within 1 s, issue 31).
let tmp: ReturnType<typeof tempDir> | undefined;
let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  tmp?.remove();
});

describe('revocation by the CLI in another process', () => {
  test('a key and a lead token revoked by the CLI are refused on the next request to the running server (on PostgreSQL within 1 s)', async () => {
    tmp = tempDir('svc-revoke-');
    const dataDir = path.join(tmp.dir, 'data');
    const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);
    const key = (await cli('keys', 'create', '--scopes', 'dashboard:read')).json as { id: string; key: string };
    const lead = (await cli('leads', 'create', '--email', 'lead@example.com')).json as { id: string; apiToken: string };
    server = await spawnServer({ dataDir });
    const dashboard = () => fetch(`${server!.url}/api/v1/dashboard/scans`, { headers: { authorization: `Bearer ${key.key}` } });
    const telemetry = () =>
      fetch(`${server!.url}/api/v1/probe/telemetry`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe-token': lead.apiToken }, body: JSON.stringify(scanPayload()) });

    // Used (and so possibly remembered) before the revocation.
    expect((await dashboard()).status).toBe(200);
    expect((await dashboard()).status).toBe(200);
    expect((await telemetry()).status).toBe(204);

    const status = (ask: () => Promise<Response>) => async () => (await ask()).status;
    expect((await cli('keys', 'revoke', key.id)).code).toBe(0);
    expect(await onceHeard(status(dashboard), (code) => code !== 200)).toBe(401);
    expect((await cli('leads', 'revoke', lead.id)).code).toBe(0);
    expect(await onceHeard(status(telemetry), (code) => code !== 204)).toBe(401);
  }, 30_000);

  test('a widget key revoked by the CLI, and an FAQ changed by another process, are seen by the public FAQ endpoint on the next request (on PostgreSQL within 1 s)', async () => {
    tmp = tempDir('svc-revoke-');
    const dataDir = path.join(tmp.dir, 'data');
    const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);
    const admin = (await cli('keys', 'create', '--scopes', 'admin')).json as { key: string };
    server = await spawnServer({ dataDir, env: { SVC_PLATFORM_A_APP_SECRET: 'revocation-app-secret' } });
    const call = async (method: string, route: string, body: unknown) => {
      const res = await fetch(`${server!.url}${route}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.key}` }, body: JSON.stringify(body) });
      expect(res.status).toBeLessThan(300);
      return (await res.json()) as Record<string, any>;
    };
    const store = await call('POST', '/api/v1/admin/stores', { platform: 'platform-a', domain: 'revoke.myplatform-a.com', credentials: { viaApp: true } });
    const faq = await call('POST', '/api/v1/admin/faqs', { storeId: store.id, entityType: 'product', entityRef: 'tote', question: 'Does it fit?', answer: 'Yes.', status: 'approved' });
    const widget = await call('POST', '/api/v1/admin/keys', { name: 'widget', scopes: ['products:read'], allowedDomains: ['www.revoke-shop.test'], storeId: store.id });
    const faqs = () => fetch(`${server!.url}/api/v1/public/faqs?type=product&ref=tote`, { headers: { 'X-Api-Key': widget.key, Origin: 'https://www.revoke-shop.test' } });

    // Answered (and so possibly remembered) twice before anything changes.
    expect((await (await faqs()).json()) as unknown).toMatchObject({ items: [{ answer: 'Yes.' }] });
    expect((await faqs()).status).toBe(200);

    // Another process's write: this test's own connection to the server's database, on either engine.
    await queryDataDir(dataDir, "UPDATE faq_entries SET answer = 'Yes, a 15-inch laptop.' WHERE id = ?", faq.id);
    const answered = async () => {
      const response = await faqs();
      return { status: response.status, body: (await response.json()) as { items?: { answer: string }[]; error?: string } };
    };
    const edited = await onceHeard(answered, ({ body }) => body.items?.[0]?.answer !== 'Yes.');
    expect(edited.body).toMatchObject({ items: [{ answer: 'Yes, a 15-inch laptop.' }] });

    expect((await cli('keys', 'revoke', widget.id)).code).toBe(0);
    const refused = await onceHeard(answered, ({ status }) => status !== 200);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('invalid_api_key');
  }, 30_000);
});
