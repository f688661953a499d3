import { t } from 'elysia';

/** Where the rate limits are kept, as /healthz details report it (tiers.ts `LimiterBackend`). */
export const limiterBackendSchema = t.Union(
  [
    t.Object({ backend: t.Literal('in-process', { description: 'Each instance keeps its own buckets (no --redis-url)' }) }),
    t.Object({
      backend: t.Literal('redis', { description: 'Buckets shared by every instance in Redis (--redis-url)' }),
      redis: t.Union([t.Literal('up'), t.Literal('down')], { description: '`down`: Redis does not answer, so each instance limits with its own buckets until it does again' }),
    }),
  ],
  { description: 'Where the rate limits are kept; never the Redis URL' },
);
