import { Elysia } from 'elysia';
import { ApiError } from '../lib/errors.ts';
import { webhookDocs as docs } from './docs.ts';
import type { createReceivers, Receipt } from './receive.ts';

/**
 * Inbound webhooks. Handlers take only `request` and this instance has no parse hook, so Elysia
 * never consumes the body: the receivers read the raw bytes themselves to verify signatures.
 */
/** Every inbound webhook route (each declares the per-address webhook limit in its apiDoc, docs.ts). */
const WEBHOOK_PATHS = ['/api/v1/webhooks/platform-a', '/api/v1/platform-a/webhooks', '/api/v1/platform-b/webhooks', '/api/v1/platform-c/webhooks'];

export function webhookRoutes(receivers: ReturnType<typeof createReceivers>, onDelivery: (platform: string, outcome: string) => void = () => {}) {
  /** Reports each delivery's outcome: the 200's `outcome`, an ApiError's code, or `error`. */
  const counted = (platform: string, receive: (request: Request) => Promise<Receipt>) => async ({ request }: { request: Request }) => {
    try {
      const receipt = await receive(request);
      onDelivery(platform, receipt.outcome);
      return receipt;
    } catch (error) {
      onDelivery(platform, error instanceof ApiError ? error.code : 'error');
      throw error;
    }
  };
  const platformA = counted('platform-a', receivers.platformA);
  return new Elysia({ name: 'webhooks' })
    .post(WEBHOOK_PATHS[0]!, platformA, { detail: docs.platformA })
    .post(WEBHOOK_PATHS[1]!, platformA, { detail: docs.platformA })
    .post(WEBHOOK_PATHS[2]!, counted('platform-b', receivers.platformB), { detail: docs.platformB })
    .post(WEBHOOK_PATHS[3]!, counted('platform-c', receivers.platformC), { detail: docs.platformC });
}
