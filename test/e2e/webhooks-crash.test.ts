import { expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { platformAProduct } from '../fakes/payloads.ts';
import { runCli } from '../helpers/cli.ts';
import { queryDataDir } from '../helpers/engine.ts';
import { loadThenKill } from '../helpers/crash-load.ts';
import { serversPerTest } from '../helpers/server.ts';

const SHOP = 'crash.myplatform-a.com';
const APP_SECRET = 'crash-app-secret';

const servers = serversPerTest('svc-webhooks-crash-');

test('kill -9 mid-load loses no webhook delivery that was answered 200 (group commit answers only after COMMIT)', async () => {
  const created = await runCli(['keys', 'create', '--scopes', 'admin', '--data-dir', servers.dataDir]);
  expect(created.code).toBe(0);
  const env = { SVC_PLATFORM_A_APP_SECRET: APP_SECRET, SVC_RATE_WEBHOOK: '10000000' };
  const first = await servers.start({ env });
  const store = await fetch(`${first.url}/api/v1/admin/stores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${created.json.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ platform: 'platform-a', domain: SHOP, currency: 'USD', credentials: { viaApp: true } }),
  });
  expect(store.status).toBe(201);

  const { acknowledged, failed } = await loadThenKill({
    send: (eventId) => {
      const body = JSON.stringify(platformAProduct(1000 + (Number(eventId.split('-')[1]) % 50)));
      return fetch(`${first.url}/api/v1/webhooks/platform-a`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-platform-a-hmac-sha256': createHmac('sha256', APP_SECRET).update(body).digest('base64'),
          'x-platform-a-topic': 'products/update',
          'x-platform-a-shop-domain': SHOP,
          'x-platform-a-event-id': eventId,
        },
        body,
      });
    },
    okStatus: 200,
    kill: () => first.proc.kill(9),
  });
  await first.proc.exited;
  expect(first.proc.signalCode).toBe('SIGKILL');
  expect(failed).toBe(0);
  expect(acknowledged.length).toBeGreaterThan(50);

  // Restart on the same data directory (and database): it recovers and serves again.
  const second = await servers.start({ env });
  expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  const logged = new Set(((await queryDataDir(servers.dataDir, 'SELECT dedupe_key AS key FROM webhook_deliveries')) as { key: string }[]).map((row) => row.key));
  expect(acknowledged.filter((id) => !logged.has(`event:${id}`))).toEqual([]);
}, 30_000);
