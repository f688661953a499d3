import { Elysia } from 'elysia';
import { putRateLimitHeaders, type TierLimiter } from '../ratelimit/tiers.ts';
import { undocumentedRoute } from '../lib/access.ts';
import type { Admission, ProbeAdmission } from './admission.ts';
import type { ProbeCors } from './cors.ts';
import { telemetryDocs as docs } from './docs.ts';
import { ingestBulk, ingestTelemetry, type IngestDeps } from './pipeline.ts';
import type { MaybePromise } from '../lib/maybe-promise.ts';

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
    /** Told of committed scans; the answer waits for what it returns (a lead's first scan, noted once). */
    onIngested?: (admission: Admission, endpoint: 'telemetry' | 'scan-bulk', scans: number) => MaybePromise<void>;
  },
) {
  const routes = new Elysia({ prefix: '/api/v1/probe' });
  if (deps.cors) {
    const preflight = { detail: undocumentedRoute({ auth: 'public' }) };
    routes.options('/telemetry', deps.cors.preflight, preflight).options('/scan-bulk', deps.cors.preflight, preflight);
  }
  return routes
    .post('/telemetry', async ({ request, set }) => {
      // Waited for only when the key or token was looked up in storage: a promise is a turn of the loop.
      let admission = deps.admission.admissionOf(request);
      if (admission instanceof Promise) admission = await admission;
      await ingestTelemetry(request, admission, deps);
      const noted = deps.onIngested?.(admission, 'telemetry', 1);
      if (noted) await noted;
      set.status = 204;
    }, { detail: docs.telemetry })
    .post('/scan-bulk', async ({ request, set }) => {
      let admission = deps.admission.admissionOf(request);
      if (admission instanceof Promise) admission = await admission;
      const { result, decision } = await ingestBulk(request, admission, deps);
      const noted = deps.onIngested?.(admission, 'scan-bulk', result.inserted);
      if (noted) await noted;
      putRateLimitHeaders(set.headers, decision);
      return result;
    }, { detail: docs.bulk });
}
