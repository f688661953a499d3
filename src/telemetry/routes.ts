import { Elysia } from 'elysia';
import type { ProbeAdmission } from './admission.ts';
import { ingestTelemetry, type IngestDeps } from './pipeline.ts';

/**
 * POST /api/v1/probe/telemetry (spec §4.1): 204 once committed. No body schema and no parse hook:
 * the route reads the raw bytes itself, because mode 2 signs them exactly as sent.
 */
export function telemetryRoutes(deps: IngestDeps & { admission: ProbeAdmission }) {
  return new Elysia({ prefix: '/api/v1/probe' }).post('/telemetry', async ({ request, set }) => {
    await ingestTelemetry(request, deps.admission.admissionOf(request), deps);
    set.status = 204;
  });
}
