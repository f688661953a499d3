import { Elysia } from 'elysia';
import { rateLimitHeaders, type TierLimiter } from '../ratelimit/tiers.ts';
import type { ProbeAdmission } from './admission.ts';
import { ingestBulk, ingestTelemetry, type IngestDeps } from './pipeline.ts';

/**
 * POST /api/v1/probe/telemetry (spec §4.1): 204 once committed; POST /api/v1/probe/scan-bulk
 * (spec §4.2): 200 with the counts once committed. No body schema and no parse hook: the routes
 * read the raw bytes themselves, because mode 2 signs them exactly as sent.
 */
export function telemetryRoutes(deps: IngestDeps & { admission: ProbeAdmission; limiter: TierLimiter }) {
  return new Elysia({ prefix: '/api/v1/probe' })
    .post('/telemetry', async ({ request, set }) => {
      await ingestTelemetry(request, deps.admission.admissionOf(request), deps);
      set.status = 204;
    })
    .post('/scan-bulk', async ({ request, set }) => {
      const { result, decision } = await ingestBulk(request, deps.admission.admissionOf(request), deps);
      Object.assign(set.headers, rateLimitHeaders(decision));
      return result;
    });
}
