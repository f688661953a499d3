import { afterEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { scanPayload } from '../helpers/probe.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

// Issue 12 item 3: whatever the server keeps in memory about keys and tokens, a revocation made by
// the CLI in another process is refused on the very next request.
let tmp: ReturnType<typeof tempDir> | undefined;
let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  tmp?.remove();
});

describe('revocation by the CLI in another process', () => {
  test('a key and a lead token revoked by the CLI are refused on the next request to the running server', async () => {
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

    expect((await cli('keys', 'revoke', key.id)).code).toBe(0);
    expect((await dashboard()).status).toBe(401);
    expect((await cli('leads', 'revoke', lead.id)).code).toBe(0);
    expect((await telemetry()).status).toBe(401);
  }, 30_000);
});
