import { Elysia } from 'elysia';
import { putRateLimitHeaders, type TierLimiter } from '../ratelimit/tiers.ts';
import { undocumentedRoute } from '../lib/access.ts';
import type { Admission, ProbeAdmission } from './admission.ts';
import type { ProbeCors } from './cors.ts';
import { telemetryDocs as docs } from './docs.ts';
import { ingestBulk, ingestTelemetry, type IngestDeps } from './pipeline.ts';

/**
 * POST /api/v1/probe/telemetry (spec §4.1): 204 once committed; POST /api/v1/probe/scan-bulk
 * (spec §4.2): 200 with the counts once committed. No body schema and no parse hook: the routes
 * read the raw bytes themselves, because mode 2 signs them exactly as sent. With CORS configured,
 * each also answers its browser preflight (public: a preflight costs no token).
 */
export function telemetryRoutes(
  deps: IngestDeps & {
    admission: ProbeAdmission;
    limiter: TierLimiter;
    cors: ProbeCors | null;
    onIngested?: (admission: Admission, endpoint: 'telemetry' | 'scan-bulk', scans: number) => void;
  },
) {
  const routes = new Elysia({ prefix: '/api/v1/probe' });
  if (deps.cors) {
    const preflight = { detail: undocumentedRoute({ auth: 'public' }) };
    routes.options('/telemetry', deps.cors.preflight, preflight).options('/scan-bulk', deps.cors.preflight, preflight);
  }
  return routes
    .post('/telemetry', async ({ request, set }) => {
      const admission = deps.admission.admissionOf(request);
      await ingestTelemetry(request, admission, deps);
      deps.onIngested?.(admission, 'telemetry', 1);
      set.status = 204;
    }, { detail: docs.telemetry })
    .post('/scan-bulk', async ({ request, set }) => {
      const admission = deps.admission.admissionOf(request);
      const { result, decision } = await ingestBulk(request, admission, deps);
      deps.onIngested?.(admission, 'scan-bulk', result.inserted);
      putRateLimitHeaders(set.headers, decision);
      return result;
    }, { detail: docs.bulk });
}
