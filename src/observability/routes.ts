import { Elysia } from 'elysia';
import { authorizeBearer } from '../auth/guard.ts';
import type { KeyStore } from '../auth/keys.ts';
import type { Metrics } from './metrics.ts';

/** GET /metrics: Prometheus text, for a key with `metrics:read` (or `admin`). Checked in the route, so `/metrics/` is guarded too. */
export function metricsRoutes(metrics: Metrics, keys: KeyStore) {
  return new Elysia().get('/metrics', ({ request }) => {
    authorizeBearer(keys, request.headers.get('authorization'), 'metrics:read');
    return new Response(metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' } });
  });
}
