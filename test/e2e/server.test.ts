import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { queryDataDir, testSqliteOnly } from '../helpers/engine.ts';
import { spawnServer } from '../helpers/server.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';

let tmp: ReturnType<typeof tempDir>;
let dataDir: string;
beforeEach(() => {
  tmp = tempDir('svc-serve-');
  dataDir = path.join(tmp.dir, 'data');
});
afterEach(() => tmp.remove());

const adminKey = async (env: Record<string, string> = {}) =>
  (await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', dataDir], { env })).json.key as string;

describe('svc serve (spawned process)', () => {
  test('serves /healthz, /embed.js and the admin API, and exits 0 on SIGTERM', async () => {
    const key = await adminKey();
    const server = await spawnServer({ dataDir });
    try {
      // Port 0 picked a real port, and the default base URL follows it.
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
      expect(server.baseUrl).toBe(server.url);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const embed = await fetch(`${server.url}/embed.js`);
      expect(embed.status).toBe(200);
      expect(embed.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await fetch(`${server.url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      expect((await fetch(`${server.url}/api/v1/admin/keys`)).status).toBe(401);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });

  test('the server sweeps expired records at start (unused sign-ups, old deliveries) and stamps nosniff on every answer', async () => {
    const DAY = 86_400_000;
    const old = (await runCli(['leads', 'create', '--email', 'old@example.com', '--data-dir', dataDir])).json.id as string;
    await runCli(['leads', 'create', '--email', 'fresh@example.com', '--data-dir', dataDir]);
    await queryDataDir(dataDir, 'UPDATE leads SET created_at = ? WHERE id = ?', Date.now() - 31 * DAY, old);
    const delivery = "INSERT INTO webhook_deliveries (id, store_id, platform, topic, outcome, received_at) VALUES (?, 's', 'platform-a', 'products/update', 'applied', ?)";
    await queryDataDir(dataDir, delivery, 'old', Date.now() - 31 * DAY);
    await queryDataDir(dataDir, delivery, 'recent', Date.now() - DAY);
    const server = await spawnServer({ dataDir });
    try {
      const left = async () => ({
        leads: (await queryDataDir(dataDir, 'SELECT email FROM leads')).map((row) => row.email),
        deliveries: (await queryDataDir(dataDir, 'SELECT id FROM webhook_deliveries')).map((row) => row.id),
      });
      for (let i = 0; i < 100; i++) {
        const now = await left();
        if (now.deliveries.length <= 1 && now.leads.length <= 1) break;
        await Bun.sleep(50);
      }
      expect(await left()).toEqual({ leads: ['fresh@example.com'], deliveries: ['recent'] });
      for (const answer of [await fetch(`${server.url}/healthz`), await fetch(`${server.url}/no/such/route`), await fetch(`${server.url}/embed.js`)]) {
        expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      }
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });

  test('SIGINT also shuts down cleanly', async () => {
    const server = await spawnServer({ dataDir });
    expect(await server.stop('SIGINT')).toBe(0);
  });

  test('graceful shutdown finishes an in-flight request before exiting', async () => {
    const server = await spawnServer({ dataDir });
    const encoder = new TextEncoder();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode('{"email":'));
        await released;
        controller.enqueue(encoder.encode('"inflight@example.com"}'));
        controller.close();
      },
    });
    const pending = fetch(`${server.url}/api/v1/public/leads`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      // @ts-expect-error Bun supports streaming request bodies; `duplex` is not in every lib.dom
      duplex: 'half',
    });
    await Bun.sleep(200);
    server.proc.kill('SIGTERM');
    await Bun.sleep(200);
    release();
    const res = await pending;
    expect(res.status).toBe(201);
    expect(await server.proc.exited).toBe(0);
    // The lead created during shutdown was committed.
    const again = await runCli(['leads', 'create', '--email', 'inflight@example.com', '--data-dir', dataDir]);
    expect(again.stderr).toContain('lead_exists');
  });

  test('migrations run once: a restart applies none and keeps the data', async () => {
    const first = await spawnServer({ dataDir });
    expect(await first.stop()).toBe(0);
    const key = await adminKey();
    const second = await spawnServer({ dataDir });
    try {
      expect((await fetch(`${second.url}/api/v1/admin/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    } finally {
      await second.stop();
    }
    const migrate = await runCli(['migrate', '--data-dir', dataDir]);
    expect(migrate.json.applied).toBe(0);
  });

  test('413 JSON over the real transport, declared or streamed', async () => {
    const env = { SVC_MAX_BODY_BYTES: '2048' };
    const server = await spawnServer({ dataDir, env });
    try {
      const big = JSON.stringify({ email: 'x'.repeat(100_000) + '@example.com' });
      const declared = await fetch(`${server.url}/api/v1/public/leads`, { method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
      expect(declared.status).toBe(413);
      expect(await declared.json()).toMatchObject({ error: 'payload_too_large' });

      const chunks = [big.slice(0, 50_000), big.slice(50_000)];
      const streamed = await fetch(`${server.url}/api/v1/public/leads`, {
        method: 'POST',
        body: new ReadableStream({
          pull(controller) {
            const next = chunks.shift();
            if (next === undefined) controller.close();
            else controller.enqueue(new TextEncoder().encode(next));
          },
        }),
        headers: { 'content-type': 'application/json' },
        // @ts-expect-error see above
        duplex: 'half',
      });
      expect(streamed.status).toBe(413);
      expect(await streamed.json()).toMatchObject({ error: 'payload_too_large' });
    } finally {
      await server.stop();
    }
  });

  test('a SVC_ENCRYPTION_KEY that does not open the stored credentials (another key, or none) stops serve with one line; the sealing key serves', async () => {
    const sealing = { SVC_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), SVC_PLATFORM_A_API_BASE: 'http://127.0.0.1:9' };
    const key = await adminKey();
    const first = await spawnServer({ dataDir, env: sealing });
    try {
      const store = await fetch(`${first.url}/api/v1/admin/stores`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ platform: 'platform-a', domain: 'sealed.myplatform-a.com', currency: 'EUR', credentials: { clientSecret: 'client-secret', accessToken: 'access-token' } }),
      });
      expect(store.status).toBe(201);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    for (const env of [{ SVC_ENCRYPTION_KEY: Buffer.alloc(32, 2).toString('base64') }, {}] as Record<string, string>[]) {
      const refused = await runCli(['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], { env, timeoutMs: 30_000 });
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^svc: invalid SVC_ENCRYPTION_KEY: the store credentials in .* do not open \(.*\); start with the key that sealed them$/)]);
    }
    const again = await spawnServer({ dataDir, env: sealing });
    expect(await again.stop()).toBe(0);
  });

  test('a start warns, once each, of settings that leave something not working: no encryption key; stores of svc\'s platform-A app without its secret', async () => {
    const key = await adminKey();
    const first = await spawnServer({ dataDir });
    try {
      const store = await fetch(`${first.url}/api/v1/admin/stores`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ platform: 'platform-a', domain: 'app.myplatform-a.com', currency: 'EUR', credentials: { viaApp: true } }),
      });
      expect(store.status).toBe(201);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('svc: warning: '));
    expect(warnings(first.stderr())).toEqual(['svc: warning: SVC_ENCRYPTION_KEY is not set; store credentials and webhook secrets are stored in clear']);
    const second = await spawnServer({ dataDir });
    expect(await second.stop()).toBe(0);
    expect(warnings(second.stderr())).toEqual([
      'svc: warning: SVC_ENCRYPTION_KEY is not set; store credentials and webhook secrets are stored in clear',
      "svc: warning: SVC_PLATFORM_A_APP_SECRET is not set, so the webhook deliveries of the 1 store(s) connected through svc's platform-A app are refused (500 app_secret_not_configured)",
    ]);
    const configured = await spawnServer({ dataDir, env: { SVC_PLATFORM_A_APP_SECRET: 'app-secret', SVC_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64') } });
    expect(await configured.stop()).toBe(0);
    expect(warnings(configured.stderr())).toEqual([]);
  });

  test('listening on every interface without a base URL warns that links would name 0.0.0.0', async () => {
    const res = await runCli(['serve', '--http', '0.0.0.0:0', '--data-dir', dataDir], { env: { SVC_ENCRYPTION_KEY: Buffer.alloc(32, 4).toString('base64') }, timeoutMs: 5_000 });
    expect(res.stdout).toContain('"status":"listening"');
    expect(res.stderr.split('\n').filter((line) => line.startsWith('svc: warning: '))).toEqual([
      expect.stringMatching(/^svc: warning: SVC_BASE_URL is not set, so signal links and webhook registrations name http:\/\/0\.0\.0\.0:\d+, which no client can reach: set it to the address clients use$/),
    ]);
  });

  test('an invalid setting stops serve with one line naming it', async () => {
    const res = await runCli(['serve', '--http', 'nowhere', '--data-dir', dataDir]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('svc: invalid --http: expected <host>:<port> with a port from 0 to 65535, got "nowhere"');
  });
});

describe('a start that fails', () => {
  testSqliteOnly('the failure is planted in the start of the WAL checkpointer, which PostgreSQL has not; the start runs in this process on the SQLite file, with no database URL', 'a failure after listening (the checkpointer Worker does not start) frees the port and the data directory: the next start on both serves', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, reusePort: false, fetch: () => new Response(null) });
    const port = probe.port!;
    probe.stop(true);
    const config = loadConfig({ http: `127.0.0.1:${port}`, 'data-dir': dataDir }, {});
    let listened = false;
    const failing = startServer(config, {
      startCheckpointer: async () => {
        listened = (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
        throw new Error('planted: the checkpointer Worker failed to start');
      },
    });
    await expect(failing).rejects.toThrow('planted: the checkpointer Worker failed to start');
    expect(listened).toBe(true);
    const server = await startServer(config);
    try {
      expect(server.url).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.shutdown();
    }
  });
});
