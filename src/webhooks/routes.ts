import { Elysia } from 'elysia';
import type { createReceivers } from './receive.ts';

/**
 * Inbound webhooks. Handlers take only `request` and this instance has no parse hook, so Elysia
 * never consumes the body: the receivers read the raw bytes themselves to verify signatures.
 */
export function webhookRoutes(receivers: ReturnType<typeof createReceivers>) {
  return new Elysia({ name: 'webhooks' })
    .post('/api/v1/webhooks/platform-a', ({ request }) => receivers.platformA(request))
    .post('/api/v1/platform-a/webhooks', ({ request }) => receivers.platformA(request))
    .post('/api/v1/platform-b/webhooks', ({ request }) => receivers.platformB(request))
    .post('/api/v1/platform-c/webhooks', ({ request }) => receivers.platformC(request));
}
