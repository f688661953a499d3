import { createHmac } from 'node:crypto';
import { json, postDelivery, startFake, type Outage } from './http.ts';

export interface FakeShop {
  domain: string;
  accessToken: string;
  /** The store's own app's client secret: what the platform signs deliveries with. */
  clientSecret: string;
  currency: string;
}

export interface Subscription {
  id: string;
  shop: string;
  topic: string;
  callbackUrl: string;
}

export interface SendOptions {
  eventId?: string;
  triggeredAt?: string;
  /** Sign with this secret instead of the shop's (tamper tests). */
  secret?: string;
  /** Replace (or with null, drop) headers after signing. */
  headers?: Record<string, string | null>;
  /** Send this body instead of the JSON of the payload; it is what gets signed unless `signedBody` is set. */
  body?: string;
  /** Sign these bytes while sending `body` (a body altered in transit). */
  signedBody?: string;
}

const restTopic = (graphQl: string) => graphQl.toLowerCase().replace('_', '/');

/**
 * Platform A: the GraphQL Admin API calls svc makes (list/create webhook subscriptions, shop
 * currency), authenticated by `X-Platform-A-Access-Token`, and signed deliveries like the platform's.
 */
export function startFakePlatformA(shops: FakeShop[]) {
  const subscriptions: Subscription[] = [];
  const outage: Outage = { status: null };
  let nextId = 1;
  let eventCounter = 1;

  const fake = startFake(async (request, url) => {
    if (request.method !== 'POST' || !/^\/admin\/api\/[\d-]+\/graphql\.json$/.test(url.pathname)) return json(404, { errors: 'Not Found' });
    const shop = shops.find((s) => s.accessToken === request.headers.get('x-platform-a-access-token'));
    if (!shop) return json(401, { errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
    if (outage.status) return json(outage.status, { errors: 'Internal Server Error' });
    const { query, variables } = (await request.json()) as { query: string; variables?: any };
    if (query.includes('webhookSubscriptionCreate')) {
      const callbackUrl = variables?.webhookSubscription?.callbackUrl;
      if (!/^https?:\/\//.test(callbackUrl ?? '')) {
        return json(200, { data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['callbackUrl'], message: 'Address is invalid' }] } } });
      }
      const duplicate = subscriptions.some((s) => s.shop === shop.domain && s.topic === variables.topic && s.callbackUrl === callbackUrl);
      if (duplicate) {
        return json(200, { data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['callbackUrl'], message: 'Address for this topic has already been taken' }] } } });
      }
      const sub = { id: `gid://platform-a/WebhookSubscription/${nextId++}`, shop: shop.domain, topic: variables.topic, callbackUrl };
      subscriptions.push(sub);
      return json(200, { data: { webhookSubscriptionCreate: { webhookSubscription: { id: sub.id }, userErrors: [] } } });
    }
    if (query.includes('webhookSubscriptions')) {
      const edges = subscriptions
        .filter((s) => s.shop === shop.domain)
        .map((s) => ({ node: { id: s.id, topic: s.topic, endpoint: { __typename: 'WebhookHttpEndpoint', callbackUrl: s.callbackUrl } } }));
      return json(200, { data: { webhookSubscriptions: { edges } } });
    }
    if (query.includes('shop')) return json(200, { data: { shop: { currencyCode: shop.currency } } });
    return json(200, { errors: [{ message: 'Field does not exist' }] });
  });

  /** One delivery exactly as the platform sends it: base64 HMAC-SHA256 of the raw body with the app's secret. */
  async function send(url: string, shopDomain: string, topic: string, payload: unknown, options: SendOptions = {}): Promise<Response> {
    const shop = shops.find((s) => s.domain === shopDomain);
    const body = options.body ?? JSON.stringify(payload);
    const hmac = createHmac('sha256', options.secret ?? shop?.clientSecret ?? 'unknown').update(options.signedBody ?? body).digest('base64');
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-platform-a-hmac-sha256': hmac,
      'x-platform-a-topic': topic,
      'x-platform-a-shop-domain': shopDomain,
      'x-platform-a-api-version': '2025-01',
      'x-platform-a-webhook-id': crypto.randomUUID(),
      'x-platform-a-event-id': options.eventId ?? `evt-${eventCounter++}`,
      'x-platform-a-triggered-at': options.triggeredAt ?? new Date().toISOString(),
    };
    return postDelivery(url, headers, options.headers, body);
  }

  return {
    ...fake,
    subscriptions,
    outage,
    send,
    /** Deliver an event to every subscription of the shop for this topic (as the platform fans out). */
    async deliver(shopDomain: string, topic: string, payload: unknown, options: SendOptions = {}): Promise<Response[]> {
      const targets = subscriptions.filter((s) => s.shop === shopDomain && restTopic(s.topic) === topic);
      const eventId = options.eventId ?? `evt-${eventCounter++}`;
      return Promise.all(targets.map((s) => send(s.callbackUrl, shopDomain, topic, payload, { ...options, eventId })));
    },
  };
}

export type FakePlatformA = ReturnType<typeof startFakePlatformA>;
