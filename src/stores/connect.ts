import type { HookStatus, StoreRow } from '../db/schema/index.ts';
import { clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { PlatformApiError } from '../platforms/http.ts';
import type { StoreCredentials } from './credentials.ts';

/** Where each platform delivers to (what svc registers, and what an operator configures by hand). */
export function webhookUrlFor(baseUrl: string, store: Pick<StoreRow, 'id' | 'platform'>): string {
  switch (store.platform) {
    case 'platform-a':
      return `${baseUrl}/api/v1/webhooks/platform-a`;
    case 'platform-b':
      return `${baseUrl}/api/v1/platform-b/webhooks`;
    case 'platform-c':
      return `${baseUrl}/api/v1/platform-c/webhooks?store=${encodeURIComponent(store.id)}`;
  }
}

export type { PlatformSettings };

export interface HookResult {
  status: HookStatus;
  topics: string[];
  error: string | null;
}

/**
 * Register the product hooks of spec §4.3 rule 3 (idempotent on the platform side). Stores whose
 * hooks svc does not own keep their status. Failures are returned, never thrown: they are shown on
 * the store record and can be retried.
 */
export async function registerHooks(store: StoreRow, credentials: StoreCredentials, webhookSecret: string | null, settings: PlatformSettings): Promise<HookResult> {
  if (credentials.kind === 'via-app' || credentials.kind === 'token-only') return { status: store.hookStatus, topics: [], error: null };
  const url = webhookUrlFor(settings.baseUrl, store);
  const api = clientFor(store, credentials, settings)!;
  try {
    const { topics } =
      api.platform === 'platform-a'
        ? await api.client.registerHooks(url)
        : api.platform === 'platform-b'
          ? await api.client.registerHooks(url, { 'X-Svc-Store-Id': store.id, 'X-Svc-Webhook-Secret': webhookSecret! })
          : await api.client.registerHooks(url, webhookSecret!);
    return { status: 'registered', topics, error: null };
  } catch (error) {
    if (!(error instanceof PlatformApiError)) throw error;
    return { status: 'failed', topics: [], error: error.message };
  }
}

/** The store's ISO 4217 currency from the platform's shop settings, or the reason it could not be read. */
export async function fetchCurrency(store: StoreRow, credentials: StoreCredentials, settings: PlatformSettings): Promise<{ currency: string } | { error: string }> {
  const api = clientFor(store, credentials, settings);
  if (!api) return { error: 'a store connected through svc\'s app gives svc no API access; send it as currency with the credentials (PUT /api/v1/admin/stores/:id/credentials)' };
  try {
    const currency = await api.client.fetchCurrency();
    if (!currency || !/^[A-Z]{3}$/.test(currency)) return { error: 'the platform did not report an ISO 4217 currency' };
    return { currency };
  } catch (error) {
    if (!(error instanceof PlatformApiError)) throw error;
    return { error: error.message };
  }
}
