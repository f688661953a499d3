import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { tempDir, type TestApp } from './app.ts';
import { runCli } from './cli.ts';
import { spawnServer } from './server.ts';

export const TELEMETRY = '/api/v1/probe/telemetry';

/** How many scans the test app's database holds, on either engine. */
export async function scanCount(t: TestApp): Promise<number> {
  return Number((await t.query('SELECT count(*) AS n FROM scans'))[0]!.n);
}

/** A minimal valid telemetry payload, with overrides. */
export const scanPayload = (overrides: Record<string, unknown> = {}) => ({
  hostname: 'shop.example.com',
  signals: { title: { value: 'Shop', length: 4 } },
  ...overrides,
});

/** Mode 2 headers: hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the raw key (spec §5). */
export function signedHeaders(rawKey: string, body: string, timestamp: number | string): Record<string, string> {
  // Computed with node:crypto directly, independent of the server's own helper.
  const signature = createHmac('sha256', rawKey).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return { 'content-type': 'application/json', 'x-probe-key': rawKey, 'x-probe-timestamp': String(timestamp), 'x-probe-signature': signature };
}

/** A signed POST of `body` (sent exactly as given) at `timestamp`. */
export function signedInit(rawKey: string, body: string, timestamp: number | string, extra: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body, headers: { ...signedHeaders(rawKey, body, timestamp), ...extra } };
}

/** A mode 1 POST with `X-Probe-Token`. */
export function tokenInit(token: string, payload: unknown, extra: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body: JSON.stringify(payload), headers: { 'content-type': 'application/json', 'x-probe-token': token, ...extra } };
}

/**
 * A spawned `svc serve` with the credentials scanners use: `key()` makes a fresh probe:scan key
 * (so each test has its own agent bucket), `token()` a verified lead's token; `scans(host)` reads
 * back, through the dashboard API, what was stored for a hostname.
 */
export async function startProbeServer(env: Record<string, string> = {}) {
  const tmp = tempDir('svc-probe-');
  const dataDir = path.join(tmp.dir, 'data');
  const cli = async (...args: string[]) => (await runCli([...args, '--data-dir', dataDir])).json;
  const admin: string = (await cli('keys', 'create', '--scopes', 'admin')).key;
  const svc = await spawnServer({ dataDir, env });
  const dashboard = async <T>(pathAndQuery: string): Promise<T> => {
    const response = await fetch(svc.url + pathAndQuery, { headers: { authorization: `Bearer ${admin}` } });
    if (!response.ok) throw new Error(`${pathAndQuery}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  return {
    url: svc.url,
    svc,
    key: async (): Promise<string> => (await cli('keys', 'create', '--scopes', 'probe:scan')).key,
    token: async (): Promise<string> => (await cli('leads', 'create', '--email', `scanner-${randomUUID()}@example.com`, '--verified')).apiToken,
    /** How many scans of `hostname` are stored. */
    count: async (hostname: string): Promise<number> => {
      const { groups } = await dashboard<{ groups: { scans: number }[] }>(`/api/v1/dashboard/stats?groupBy=grade&hostname=${hostname}`);
      return groups.reduce((sum, group) => sum + group.scans, 0);
    },
    /** The full stored records of `hostname` (signals, quality, data), newest first, at most 500. */
    scans: async (hostname: string): Promise<StoredScanRecord[]> => {
      const { items } = await dashboard<{ items: { id: string }[] }>(`/api/v1/dashboard/scans?hostname=${hostname}&limit=500`);
      return Promise.all(items.map((item) => dashboard<StoredScanRecord>(`/api/v1/dashboard/scans/${item.id}`)));
    },
    stop: async () => {
      await svc.stop();
      tmp.remove();
    },
  };
}

export type ProbeServer = Awaited<ReturnType<typeof startProbeServer>>;

export interface StoredScanRecord {
  id: string;
  hostname: string;
  url: string;
  scannedAt: string;
  signals: Record<string, any>;
  data: Record<string, unknown>;
}
