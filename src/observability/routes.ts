import { Elysia } from 'elysia';
import type { Metrics } from './metrics.ts';
import { apiDoc } from '../lib/api-doc.ts';

const metricsDoc = apiDoc({
  summary: 'Prometheus metrics',
  description: 'Text exposition format: requests by route template, method and status class, latencies, scans, rate limiting, the writer, webhooks, jobs, and the engine (database size on SQLite, the connection pool on PostgreSQL; docs/operations.md lists them).',
  tag: 'operations',
  auth: 'metrics',
  responses: { 200: { description: 'The metrics', type: 'text/plain; version=0.0.4', example: 'svc_http_requests_total{route="/healthz",method="GET",status="2xx"} 3\n' } },
});

/** GET /metrics: Prometheus text, for a key with `metrics:read` (or `admin`), as the route declares (its apiDoc). */
export function metricsRoutes(metrics: Metrics) {
  return new Elysia().get('/metrics', async () => {
    return new Response(await metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' } });
  }, { detail: metricsDoc });
}
