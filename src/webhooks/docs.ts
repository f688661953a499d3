import { t } from 'elysia';
import { apiDoc, type Failure, type Input } from '../lib/api-doc.ts';

// OpenAPI descriptions of the inbound webhook routes (src/webhooks/routes.ts). Each platform signs
// its deliveries its own way (docs/webhooks.md); the receivers verify the raw body, so it is
// documented as the platform's JSON without a schema of svc's.

const receipt = t.Object({
  received: t.Literal(true),
  outcome: t.String({ description: 'What svc did: applied, stale, removed, queued, deactivated, acknowledged, recorded, ignored_topic, ignored_inactive, refused, duplicate or ping' }),
  reason: t.Optional(
    t.String({
      description:
        'Why a `refused` delivery changed nothing: body_not_for_topic (the body is not the topic’s own), other_shop (the payload names another shop than the header), held_by_other_store (the product or order is held by another store of svc’s platform-A app, which shares the store’s secret). It is answered 200 so that the platform does not retry a delivery that can never apply; the delivery log keeps the reason.',
    }),
  ),
});

const header = (name: string, description: string, required = true): Input => ({ name, in: 'header', required, description, schema: t.String() });

const delivery = (platform: string, inputs: Input[], description: string, errors: Failure[]) =>
  apiDoc({
    summary: `Receive a ${platform} webhook`,
    description: `${description} A delivery svc already processed answers 200 again (the platform stops retrying).`,
    tag: 'webhooks',
    auth: 'webhook',
    // Unauthenticated until the body is verified: counted per source address, all webhook routes together.
    limit: { unit: 'webhook deliveries', tier: 'webhook', bucket: 'webhooks' },
    inputs,
    body: { type: 'application/json', description: `The ${platform} event as the platform sends it (docs/webhooks.md)` },
    responses: { 200: { description: 'Verified and processed (or refused, with the reason, when the body was not made for its topic or shop)', schema: receipt, example: { received: true, outcome: 'applied' } } },
    errors: [
      [401, 'unverified_webhook', 'the signature does not match the store’s webhook secret'],
      [400, 'missing_product_id', 'the payload names no product id'],
      [413, 'payload_too_large', 'request body exceeds the limit of 524288 bytes'],
      ...errors,
    ],
  });

const platformA = delivery(
  'platform-a',
  [
    header('X-Platform-A-Hmac-Sha256', 'Base64 HMAC-SHA256 of the raw body with the app’s client secret'),
    header('X-Platform-A-Topic', 'The event topic, e.g. products/update'),
    header('X-Platform-A-Shop-Domain', 'The store’s shop domain'),
    header('X-Platform-A-Event-Id', 'The event’s id (deduplication)', false),
    header('X-Platform-A-Triggered-At', 'When the event happened (ordering)', false),
  ],
  'Verified with the client secret of the store’s own app, or `SVC_PLATFORM_A_APP_SECRET` for a store of svc’s app.',
  [
    [400, 'invalid_shop_domain', 'X-Platform-A-Shop-Domain must be <name>.myplatform-a.com'],
    [400, 'missing_topic', 'missing X-Platform-A-Topic'],
    [500, 'app_secret_not_configured', 'SVC_PLATFORM_A_APP_SECRET is not set, so deliveries for stores of svc\'s app cannot be verified'],
  ],
);

export const webhookDocs = {
  platformA,
  platformB: delivery(
    'platform-b',
    [header('X-Svc-Store-Id', 'The svc store the hook was registered for'), header('X-Svc-Webhook-Secret', 'The per-store secret svc registered with the hook')],
    'Verified by the per-store secret header svc registered with the hook; products are then fetched from the platform’s API.',
    [[400, 'missing_scope', 'the payload carries no scope']],
  ),
  platformC: delivery(
    'platform-c',
    [
      { name: 'store', in: 'query', required: true, description: 'svc’s id of the store: the hook URL svc registers names it', schema: t.String() },
      header('X-Platform-C-Webhook-Signature', 'Base64 HMAC-SHA256 of the raw body with the store’s webhook secret'),
      header('X-Platform-C-Webhook-Source', 'The store’s site URL'),
      header('X-Platform-C-Webhook-Topic', 'The event topic, e.g. product.updated'),
      header('X-Platform-C-Webhook-Delivery-Id', 'The delivery’s id (deduplication)', false),
    ],
    'Verified with the store’s webhook secret; the unsigned creation ping (`webhook_id=<n>`, form-encoded, without the signature headers) is acknowledged while svc awaits it.',
    [
      [400, 'missing_store', 'the store query parameter is required'],
      [400, 'missing_topic', 'missing X-Platform-C-Webhook-Topic'],
    ],
  ),
};
