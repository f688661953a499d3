import type { Config } from '../config.ts';
import type { StoreRow } from '../db/schema/index.ts';
import type { StoreCredentials } from '../stores/credentials.ts';
import { platformAClient } from './platform-a.ts';
import { platformBClient } from './platform-b.ts';
import { platformCClient } from './platform-c.ts';

export type PlatformSettings = Pick<Config, 'baseUrl' | 'platformAApiBase' | 'platformBApiBase'> & { apiTimeoutMs?: number };

/** Whether svc can call the store's platform API with these credentials (not for a store of svc's platform-A app). */
export const hasApiAccess = (credentials: StoreCredentials): boolean => credentials.kind !== 'via-app';

/** The API client for a store, or null when its credentials give svc no API access (svc's app). */
export function clientFor(store: StoreRow, credentials: StoreCredentials, settings: PlatformSettings) {
  const timeoutMs = settings.apiTimeoutMs;
  switch (credentials.kind) {
    case 'own-app':
    case 'token-only':
      return { platform: 'platform-a' as const, client: platformAClient({ apiBase: settings.platformAApiBase ?? `https://${store.platformRef}`, accessToken: credentials.accessToken, timeoutMs }) };
    case 'api-token':
      return { platform: 'platform-b' as const, client: platformBClient({ apiBase: settings.platformBApiBase, storeHash: credentials.storeHash, accessToken: credentials.accessToken, timeoutMs }) };
    case 'rest-keys':
      return { platform: 'platform-c' as const, client: platformCClient({ ...credentials, timeoutMs }) };
    case 'via-app':
      return null;
  }
}
