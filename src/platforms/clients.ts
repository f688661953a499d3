import type { Config } from '../config.ts';
import type { StoreRecord } from '../stores/registry.ts';
import type { StoreCredentials } from '../stores/credentials.ts';
import type { Egress } from './egress.ts';
import type { CallRoute, RetryPolicy } from './http.ts';
import { platformAClient } from './platform-a.ts';
import { platformBClient } from './platform-b.ts';
import { platformCClient } from './platform-c.ts';

/** What every platform client is built with: the operator's API bases, how targets are reached (egress), the per-call timeout and in-call retries. */
export type PlatformSettings = Pick<Config, 'baseUrl' | 'platformAApiBase' | 'platformBApiBase'> & { apiTimeoutMs?: number | undefined; egress: Egress; retry?: RetryPolicy | undefined };

/** Whether svc can call the store's platform API with these credentials (not for a store of svc's platform-A app). */
export const hasApiAccess = (credentials: StoreCredentials): boolean => credentials.kind !== 'via-app';

/**
 * Where a store's API calls go, and whether the operator set that origin (trusted) or it comes from
 * the store (platform C's site URL; platform A's shop domain when SVC_PLATFORM_A_API_BASE is unset),
 * which the egress checks before every connection. Null when the credentials give svc no API access.
 */
export function apiTargetOf(store: Pick<StoreRecord, 'platformRef'>, credentials: StoreCredentials, settings: PlatformSettings): { apiBase: string; operatorSet: boolean } | null {
  switch (credentials.kind) {
    case 'own-app':
    case 'token-only':
      return settings.platformAApiBase ? { apiBase: settings.platformAApiBase, operatorSet: true } : { apiBase: `https://${store.platformRef}`, operatorSet: false };
    case 'api-token':
      return { apiBase: settings.platformBApiBase, operatorSet: true };
    case 'rest-keys':
      return { apiBase: credentials.siteUrl, operatorSet: false };
    case 'via-app':
      return null;
  }
}

/**
 * The API client for a store, or null when its credentials give svc no API access (svc's app).
 * `signal` stops its calls: every platform call runs in a job (webhooks/queue.ts), whose signal
 * says when its time budget ran out or the server shuts down.
 */
export function clientFor(store: StoreRecord, credentials: StoreCredentials, settings: PlatformSettings, signal: AbortSignal) {
  const target = apiTargetOf(store, credentials, settings);
  if (!target) return null;
  const via: CallRoute = { egress: settings.egress, operatorSet: target.operatorSet, signal };
  const common = { timeoutMs: settings.apiTimeoutMs, retry: settings.retry, via };
  switch (credentials.kind) {
    case 'own-app':
    case 'token-only':
      return { platform: 'platform-a' as const, client: platformAClient({ apiBase: target.apiBase, accessToken: credentials.accessToken, ...common }) };
    case 'api-token':
      return { platform: 'platform-b' as const, client: platformBClient({ apiBase: target.apiBase, storeHash: credentials.storeHash, accessToken: credentials.accessToken, ...common }) };
    case 'rest-keys':
      return { platform: 'platform-c' as const, client: platformCClient({ siteUrl: target.apiBase, consumerKey: credentials.consumerKey, consumerSecret: credentials.consumerSecret, ...common }) };
  }
  return null;
}
