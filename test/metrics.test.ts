import { afterEach, describe, expect, test } from 'bun:test';
import { fixedClock } from '../src/lib/clock.ts';
import { bearer, jsonRequest, makeTestApp, type TestApp } from './helpers/app.ts';
import { TELEMETRY, scanPayload, signedInit, tokenInit } from './helpers/probe.ts';
import { signedPlatformADelivery } from './helpers/signals.ts';
import { createMetrics } from '../src/observability/metrics.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
let t: TestApp;
afterEach(async () => {
  await t.close();
});

/** `name{labels} value` lines of a scrape, as [series, value]. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** The distinct values of one label over every series of a metric. */
function labelValues(text: string, metric: string, label: string): Set<string> {
  const values = new Set<string>();
  for (const series of samples(text).keys()) {
    if (!series.startsWith(`${metric}{`)) continue;
    const value = new RegExp(`${label}="((?:[^"\\\\]|\\\\.)*)"`).exec(series)?.[1];
    if (value !== undefined) values.add(value);
  }
  return values;
}

async function scrape(key: string): Promise<string> {
  const res = await t.request('/metrics', { headers: bearer(key) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

describe('GET /metrics', () => {
  test('needs metrics:read or admin: 401 without a key, 403 with another scope', async () => {
    t = await makeTestApp();
    expect((await t.request('/metrics')).status).toBe(401);
    expect((await t.request('/metrics/')).status).toBe(401);
    const res = await t.request('/metrics', { headers: bearer(await t.keyWith('dashboard:read')) });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
    await scrape(await t.keyWith('metrics:read'));
    await scrape(await t.keyWith('admin'));
  });

  test('after traffic: requests, latency, scans by tier and endpoint, rate limits, writer, webhooks, jobs, limiter, database', async () => {
    t = await makeTestApp({ clock: fixedClock(NOW), env: { SVC_RATE_ANONYMOUS: '2' } });
    const metricsKey = await t.keyWith('metrics:read');
    const agent = await t.keyWith('probe:scan');
    const body = JSON.stringify(scanPayload());
    expect((await t.request(TELEMETRY, signedInit(agent, body, NOW))).status).toBe(204);
    const bulk = JSON.stringify({ scans: [scanPayload({ url: 'https://shop.example.com/a' }), scanPayload({ url: 'https://shop.example.com/b' })] });
    expect((await t.request('/api/v1/probe/scan-bulk', signedInit(agent, bulk, NOW))).status).toBe(200);
    const { lead, apiToken } = await t.leads.create('metrics@example.com');
    await t.leads.verify(lead.id);
    expect((await t.request(TELEMETRY, tokenInit(apiToken, scanPayload()))).status).toBe(204);
    for (let i = 0; i < 3; i++) await t.request(TELEMETRY, { method: 'POST', body }); // anonymous: 2 pass the limiter, 1 is refused
    await t.request('/api/v1/webhooks/platform-a', signedPlatformADelivery('s', 'nowhere.myplatform-a.com', 'products/update', { id: 1 }));
    await t.request('/api/v1/platform-b/webhooks', jsonRequest('POST', {}));

    const text = await scrape(metricsKey);
    const s = samples(text);
    expect(s.get('svc_http_requests_total{route="/api/v1/probe/telemetry",method="POST",status="2xx"}')).toBe(2);
    expect(s.get('svc_http_requests_total{route="/api/v1/probe/telemetry",method="POST",status="4xx"}')).toBe(3);
    expect(s.get('svc_http_request_duration_seconds_count{route="/api/v1/probe/telemetry",method="POST"}')).toBe(5);
    expect(s.get('svc_http_request_duration_seconds_bucket{route="/api/v1/probe/telemetry",method="POST",le="+Inf"}')).toBe(5);
    expect(s.get('svc_scans_ingested_total{tier="agent",endpoint="telemetry"}')).toBe(1);
    expect(s.get('svc_scans_ingested_total{tier="agent",endpoint="scan-bulk"}')).toBe(2);
    expect(s.get('svc_scans_ingested_total{tier="authed",endpoint="telemetry"}')).toBe(1);
    expect(s.get('svc_rate_limited_total{tier="anonymous"}')).toBe(1);
    expect(s.get('svc_rate_limited_total{tier="agent"}')).toBe(0);
    expect(s.get('svc_scan_writer_batch_rows_count')).toBe(3);
    expect(s.get('svc_scan_writer_batch_rows_sum')).toBe(4);
    expect(s.get('svc_scan_writer_commit_seconds_count')).toBe(3);
    expect(s.get('svc_webhook_deliveries_total{platform="platform-a",outcome="unverified_webhook"}')).toBe(1);
    expect(s.get('svc_webhook_deliveries_total{platform="platform-b",outcome="unverified_webhook"}')).toBe(1);
    expect(s.get('svc_jobs{status="queued"}')).toBe(0);
    expect(s.get('svc_job_failures_total')).toBe(0);
    expect(s.get('svc_ratelimit_buckets')).toBeGreaterThanOrEqual(3);
    // The database's own figures: SQLite's file and WAL, or PostgreSQL's pool.
    if (t.config.postgres) {
      expect(s.get('svc_database_pool_max')).toBeGreaterThan(0);
      expect(s.get('svc_database_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(0);
      expect(s.get('svc_database_pool_connections{state="busy"}')).toBeGreaterThanOrEqual(0);
    } else {
      expect(s.get('svc_database_bytes')).toBeGreaterThan(0);
      expect(s.has('svc_database_wal_bytes')).toBe(true);
    }
    expect([...s.keys()].some((series) => series.startsWith('svc_build_info{version='))).toBe(true);
    // Every metric is announced with HELP and TYPE.
    for (const name of new Set([...s.keys()].map((series) => series.replace(/\{.*$/, '').replace(/_(bucket|sum|count)$/, '')))) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'));
    }
  });

  test('a flood of random paths, ids and methods adds no label values beyond the route templates', async () => {
    t = await makeTestApp();
    const key = await t.keyWith('admin');
    await t.request('/healthz');
    const before = await scrape(key);
    for (let i = 0; i < 300; i++) {
      const noise = `${i}-${Math.random().toString(36).slice(2)}`;
      await t.request(`/${noise}`);
      await t.request(`/api/v1/admin/${noise}`, { headers: bearer(key) });
      await t.request(`/api/v1/admin/leads/${noise}/verify`, { method: 'POST', headers: bearer(key) });
      await t.request(`/api/v1/platform-a/products/${noise}.jsonld?x=${noise}`);
      await t.request(`/api/v1/admin/keys/${noise}`, { method: 'DELETE' }); // 401 before routing
      await t.request(`/${noise}`, { method: 'PROPFIND' });
    }
    const after = await scrape(key);
    const routes = labelValues(after, 'svc_http_requests_total', 'route');
    expect([...routes].filter((route) => !route.startsWith('/') && route !== 'unmatched')).toEqual([]);
    expect([...routes].filter((route) => /\d-[a-z0-9]/.test(route))).toEqual([]);
    expect(routes).toEqual(
      new Set(['/healthz', '/metrics', 'unmatched', '/api/v1/admin/leads/:id/verify', '/api/v1/platform-a/products/:file', '/api/v1/admin/keys/:id']),
    );
    expect(labelValues(after, 'svc_http_requests_total', 'method')).toEqual(new Set(['GET', 'POST', 'DELETE', 'OTHER']));
    // Series count is bounded by templates x methods x status classes, not by the 1,800 requests.
    expect(samples(after).size - samples(before).size).toBeLessThan(200);
  });
});

describe('two-label counters (scans ingested, webhook deliveries)', () => {
  test('each combination of label values is its own series, counted across calls, listed in order of first use; zero scans add nothing', async () => {
    const metrics = createMetrics();
    metrics.scansIngested('agent', 'telemetry', 1);
    metrics.scansIngested('authed', 'telemetry', 2);
    metrics.scansIngested('agent', 'scan-bulk', 3);
    metrics.scansIngested('agent', 'telemetry', 4);
    metrics.scansIngested('anonymous', 'telemetry', 0);
    metrics.webhookDelivery('platform-a', 'applied');
    metrics.webhookDelivery('platform-b', 'applied');
    metrics.webhookDelivery('platform-a', 'applied');
    metrics.webhookDelivery('platform-a', 'unverified_webhook');
    const lines = (await metrics.render()).split('\n').filter((line) => /^svc_(scans_ingested|webhook_deliveries)_total\{/.test(line));
    expect(lines).toEqual([
      'svc_scans_ingested_total{tier="agent",endpoint="telemetry"} 5',
      'svc_scans_ingested_total{tier="authed",endpoint="telemetry"} 2',
      'svc_scans_ingested_total{tier="agent",endpoint="scan-bulk"} 3',
      'svc_webhook_deliveries_total{platform="platform-a",outcome="applied"} 2',
      'svc_webhook_deliveries_total{platform="platform-b",outcome="applied"} 1',
      'svc_webhook_deliveries_total{platform="platform-a",outcome="unverified_webhook"} 1',
    ]);
  });
});
