import type { Config } from '../config.ts';
import { parseJsonBytes, readBodyLimited } from '../lib/body.ts';
import type { Clock } from '../lib/clock.ts';
import { safeEqual, sha256Hex } from '../lib/crypto.ts';
import { ApiError } from '../lib/errors.ts';
import { WEBHOOK_JSON_LIMITS } from '../lib/json-limits.ts';
import { isoToMillis } from '../platforms/http.ts';
import { PLATFORM_A_HEADERS, isShopDomain, platformAEvent } from '../platforms/platform-a.ts';
import { PLATFORM_B_HEADERS, platformBEvent } from '../platforms/platform-b.ts';
import { PLATFORM_C_HEADERS, isPlatformCPing, platformCDedupeKey, platformCEvent, sameSite } from '../platforms/platform-c.ts';
import { isSignatureShaped, verifyBodySignature } from '../platforms/signature.ts';
import type { StoreRegistry, StoreRecord } from '../stores/registry.ts';
import type { RefusalReason } from '../platforms/types.ts';
import type { Dispatch, Outcome, Settled } from './dispatch.ts';

interface ReceiveDeps {
  config: Pick<Config, 'maxBodyBytes' | 'platformAAppSecret' | 'platformAShopSuffix'>;
  clock: Clock;
  stores: StoreRegistry;
  dispatch: Dispatch;
}

export interface Receipt {
  received: true;
  outcome: Outcome | 'ping';
  /** Why a `refused` delivery changed nothing. */
  reason?: RefusalReason;
}

const unverified = (detail: string) => new ApiError(401, 'unverified_webhook', detail);
const malformed = (code: string, detail: string) => new ApiError(400, code, detail);

function object(value: unknown): Record<string, any> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed('malformed_payload', 'the payload must be a JSON object');
  return value as Record<string, any>;
}

/** Without a platform event id, identical bytes on the same topic are the same delivery (retries resend the original). */
const bodyKey = (topic: string, body: Uint8Array) => `body:${sha256Hex(`${topic}\n${new TextDecoder().decode(body)}`)}`;

/**
 * The three inbound webhook flows. Each refuses from the headers alone what they can refuse (no
 * signature, one of the wrong shape, no such store: the same 401 as a wrong signature) before reading
 * the body, then verifies the delivery against the secret held for the store it names, over the raw
 * bytes and in constant time, before reading anything from the payload.
 */
export function createReceivers({ config, clock, stores, dispatch }: ReceiveDeps) {
  const receipt = (settled: Settled | { outcome: 'ping' }): Receipt => ({ received: true, ...settled });

  /**
   * Platforms A and C: a delivery for no store, for a store without a secret, or with a signature not
   * shaped like a base64 HMAC-SHA256 is refused from its headers, before its body is read (the same
   * 401 as a wrong signature, so a refusal never tells which stores svc holds); otherwise the raw
   * bytes are read and their HMAC compared with the signature in constant time.
   */
  async function readSignedBody(
    request: Request,
    store: StoreRecord | null,
    secretOf: (store: StoreRecord) => string | null,
    signature: string,
    mismatch: () => ApiError,
  ): Promise<{ store: StoreRecord; body: Uint8Array }> {
    const secret = store && secretOf(store);
    if (!store || !secret || !isSignatureShaped(signature)) throw mismatch();
    const body = await readBodyLimited(request, config.maxBodyBytes);
    if (!verifyBodySignature(secret, body, signature)) throw mismatch();
    return { store, body };
  }

  /** The HMAC key for a platform-A store: its own app's client secret or svc's app secret; null when it takes no deliveries. */
  function platformAKey(store: StoreRecord): string | null {
    const credentials = stores.credentialsOf(store);
    if (credentials.kind === 'own-app') return credentials.clientSecret;
    if (credentials.kind === 'via-app') {
      if (!config.platformAAppSecret) throw new ApiError(500, 'app_secret_not_configured', 'SVC_PLATFORM_A_APP_SECRET is not set, so deliveries for stores of svc\'s app cannot be verified');
      return config.platformAAppSecret;
    }
    return null; // a permanent-token store registered no hooks
  }

  return {
    async platformA(request: Request): Promise<Receipt> {
      // Everything the headers can refuse is refused before the body is read (docs/limits.md).
      const headers = request.headers;
      const signature = headers.get(PLATFORM_A_HEADERS.signature);
      if (!signature) throw unverified('missing X-Platform-A-Hmac-Sha256; unsigned deliveries are never accepted');
      const domain = (headers.get(PLATFORM_A_HEADERS.shopDomain) ?? '').trim().toLowerCase();
      if (!isShopDomain(domain, config.platformAShopSuffix)) throw malformed('invalid_shop_domain', `X-Platform-A-Shop-Domain must be <name>.${config.platformAShopSuffix}`);
      const topic = headers.get(PLATFORM_A_HEADERS.topic)?.trim();
      if (!topic) throw malformed('missing_topic', 'missing X-Platform-A-Topic');
      const mismatch = () => unverified('the signature does not match the body for this shop domain');
      const { store, body } = await readSignedBody(request, await stores.findByRef('platform-a', domain), platformAKey, signature, mismatch);

      const payload = object(parseJsonBytes(body, WEBHOOK_JSON_LIMITS));
      const eventId = headers.get(PLATFORM_A_HEADERS.eventId) ?? headers.get(PLATFORM_A_HEADERS.webhookId);
      // Deletes carry only the id; when the platform fired the event orders them against updates. The
      // header is not signed, so it may only move the time back, never past now.
      const now = clock.now();
      const eventAt = Math.min(isoToMillis(headers.get(PLATFORM_A_HEADERS.triggeredAt)) ?? now, now);
      return receipt(
        await dispatch({
          store,
          topic,
          dedupeKey: eventId ? `event:${eventId.slice(0, 200)}` : bodyKey(topic, body),
          // The body's bytes are kept as the product's raw payload: valid UTF-8, checked by the parse.
          event: () => platformAEvent(topic, payload, domain, eventAt, body),
        }),
      );
    },

    async platformB(request: Request): Promise<Receipt> {
      const storeId = request.headers.get(PLATFORM_B_HEADERS.storeId);
      const secret = request.headers.get(PLATFORM_B_HEADERS.secret);
      if (!storeId || !secret) throw unverified('missing X-Svc-Store-Id or X-Svc-Webhook-Secret');
      const store = await stores.get(storeId.slice(0, 64));
      const expected = store?.platform === 'platform-b' ? stores.webhookSecretOf(store) : null;
      if (!store || !expected || !safeEqual(expected, secret)) throw unverified('unknown store or wrong webhook secret');
      const body = await readBodyLimited(request, config.maxBodyBytes);

      const payload = object(parseJsonBytes(body, WEBHOOK_JSON_LIMITS));
      if (payload.producer !== `stores/${store.platformRef}`) throw unverified('the payload\'s producer is not this store');
      const scope = payload.scope;
      if (typeof scope !== 'string' || scope === '') throw malformed('missing_scope', 'the payload carries no scope');
      // The platform's `hash` identifies the event's data; with the event time it tells a retry from a
      // later event about the same product, which may carry the same data (`{type, id}`).
      const hash = typeof payload.hash === 'string' && payload.hash !== '' ? `hash:${payload.hash.slice(0, 128)}:${String(payload.created_at).slice(0, 20)}` : bodyKey(scope, body);
      return receipt(await dispatch({ store, topic: scope, dedupeKey: hash, event: () => platformBEvent(payload, clock.now()) }));
    },

    async platformC(request: Request): Promise<Receipt> {
      const storeId = new URL(request.url).searchParams.get('store');
      if (!storeId) throw malformed('missing_store', 'the store query parameter is required');
      const headers = request.headers;
      const signature = headers.get(PLATFORM_C_HEADERS.signature);
      const topic = headers.get(PLATFORM_C_HEADERS.topic)?.trim();
      const found = await stores.get(storeId.slice(0, 64));
      const named = found?.platform === 'platform-c' ? found : null;
      // The creation ping is unsigned, form-encoded and has no topic: acknowledge, never treat as an event.
      // Only a store whose hooks svc is registering (or just registered) takes one; any other id gets
      // the same 401 whether or not it names a store, so a ping neither confirms nor reveals it (and a
      // delivery for no store is refused before its body is read).
      const pingRefused = () => unverified('no platform-c store with this id awaits a creation ping');
      if (!signature && !topic) {
        if (!named) throw pingRefused();
        if (!isPlatformCPing(await readBodyLimited(request, config.maxBodyBytes)) || !(await stores.confirmHooks(named.id))) throw pingRefused();
        return receipt({ outcome: 'ping' });
      }
      if (!signature) throw unverified('missing X-Platform-C-Webhook-Signature');
      const mismatch = () => unverified('unknown store or the signature does not match the body');
      const { store, body } = await readSignedBody(request, named, stores.webhookSecretOf, signature, mismatch);
      const source = headers.get(PLATFORM_C_HEADERS.source);
      if (!source || !sameSite(source, store.platformRef)) throw unverified('X-Platform-C-Webhook-Source is not this store\'s site');
      if (!topic) throw malformed('missing_topic', 'missing X-Platform-C-Webhook-Topic');

      const payload = object(parseJsonBytes(body, WEBHOOK_JSON_LIMITS));
      const receivedAt = clock.now();
      return receipt(await dispatch({ store, topic, dedupeKey: platformCDedupeKey(topic, payload), event: () => platformCEvent(topic, payload, receivedAt) }));
    },
  };
}
