import type { HookStatus } from './types.ts';
import { OutOfTime } from '../lib/abort.ts';
import { apiTargetOf, clientFor, type PlatformSettings } from '../platforms/clients.ts';
import { TargetRefused } from '../platforms/egress.ts';
import { DEFAULT_API_TIMEOUT_MS, PlatformApiError } from '../platforms/http.ts';
import type { JobHandler } from '../webhooks/queue.ts';
import type { StoreCredentials } from './credentials.ts';
import type { StoreRegistry, StoreRecord } from './registry.ts';

/** Where each platform delivers to (what svc registers, and what an operator configures by hand). */
export function webhookUrlFor(baseUrl: string, store: Pick<StoreRecord, 'id' | 'platform'>): string {
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

/** Whether svc registers the store's hooks itself (otherwise the platform does, or there are none). */
export const registersHooks = (credentials: StoreCredentials): boolean => credentials.kind !== 'via-app' && credentials.kind !== 'token-only';

/** A failure of the platform, or of the time the job had: shown on the store, never thrown. */
const failureMessage = (error: unknown): string | null => (error instanceof PlatformApiError || error instanceof OutOfTime ? error.message : null);

/**
 * Register the product hooks of spec §4.3 rule 3 (idempotent on the platform side). Stores whose
 * hooks svc does not own keep their status. Failures are returned, never thrown: they are shown on
 * the store record and can be retried. `signal` stops the calls (the job's budget, the shutdown).
 */
export async function registerHooks(store: StoreRecord, credentials: StoreCredentials, webhookSecret: string | null, settings: PlatformSettings, signal: AbortSignal): Promise<HookResult> {
  if (!registersHooks(credentials)) return { status: store.hookStatus, topics: [], error: null };
  const url = webhookUrlFor(settings.baseUrl, store);
  const api = clientFor(store, credentials, settings, signal)!;
  try {
    const { topics } =
      api.platform === 'platform-a'
        ? await api.client.registerHooks(url)
        : api.platform === 'platform-b'
          ? await api.client.registerHooks(url, { 'X-Svc-Store-Id': store.id, 'X-Svc-Webhook-Secret': webhookSecret! })
          : await api.client.registerHooks(url, webhookSecret!);
    return { status: 'registered', topics, error: null };
  } catch (error) {
    const message = failureMessage(error);
    if (message === null) throw error;
    return { status: 'failed', topics: [], error: message };
  }
}

/** The store's ISO 4217 currency from the platform's shop settings, or the reason it could not be read. */
export async function fetchCurrency(store: StoreRecord, credentials: StoreCredentials, settings: PlatformSettings, signal: AbortSignal): Promise<{ currency: string } | { error: string }> {
  const api = clientFor(store, credentials, settings, signal);
  if (!api) return { error: 'a store connected through svc\'s app gives svc no API access; send it as currency with the credentials (PUT /api/v1/admin/stores/:id/credentials)' };
  try {
    const currency = await api.client.fetchCurrency();
    if (!currency || !/^[A-Z]{3}$/.test(currency)) return { error: 'the platform did not report an ISO 4217 currency' };
    return { currency };
  } catch (error) {
    const message = failureMessage(error);
    if (message === null) throw error;
    return { error: message };
  }
}

/**
 * Refuses (TargetRefused) credentials whose API target comes from the store (platform C's site URL,
 * a platform-A shop domain without SVC_PLATFORM_A_API_BASE) and is, or resolves to, an address
 * outside the public internet, unless the operator allows private targets. A name that does not
 * resolve (yet) is not refused: the connection reports it.
 */
export async function checkStoreTarget(platformRef: string, credentials: StoreCredentials, settings: PlatformSettings): Promise<void> {
  const target = apiTargetOf({ platformRef }, credentials, settings);
  if (!target || target.operatorSet) return;
  try {
    await settings.egress.check(target.apiBase, AbortSignal.timeout(settings.apiTimeoutMs ?? DEFAULT_API_TIMEOUT_MS));
  } catch (error) {
    if (error instanceof TargetRefused) throw error;
  }
}

/** What the store admin needs of catalogue sync: start a pass once a store is connected, show its state, pause and resume it. */
export interface StoreSync<View> {
  start(storeId: string, trigger: 'connect' | 'credentials'): Promise<void>;
  request(storeId: string): Promise<void>;
  view(storeId: string): Promise<View>;
  pause(storeId: string): Promise<StoreRecord | null>;
  resume(storeId: string): Promise<StoreRecord | null>;
}

/** The job that connects a store: its payload says what to do after the hooks. */
export const CONNECT_JOB = 'store.connect';
export interface ConnectWork {
  /** Read the currency from the platform (it was not given). */
  readCurrency: boolean;
  /** Start a catalogue import afterwards, with this trigger (null: none, a registration retried). */
  importAs: 'connect' | 'credentials' | null;
}

/**
 * Connecting a store, as a job of the queue: register its hooks, read its currency when asked, then
 * (for a new store or new credentials) start a catalogue import with both in place. Failures are
 * recorded on the store, never thrown; the job's budget and the shutdown stop its calls.
 */
export function storeConnections({ stores, settings, sync }: { stores: StoreRegistry; settings: PlatformSettings; sync: Pick<StoreSync<unknown>, 'start'> }) {
  async function connect(storeId: string, work: ConnectWork, signal: AbortSignal): Promise<{ currencyError?: string }> {
    const row = await stores.get(storeId);
    if (!row || row.status !== 'active') return {};
    const credentials = stores.credentialsOf(row);
    if (registersHooks(credentials)) await stores.markRegistering(row.id);
    // Platform C pings each hook as it is created: only now may an unsigned ping confirm the store.
    const pinged = row.platform === 'platform-c';
    if (pinged) await stores.awaitPing(row.id);
    const hooks = await registerHooks(row, credentials, stores.webhookSecretOf(row), settings, signal).finally(async () => {
      if (pinged) await stores.awaitPing(row.id); // the grace counts from the call's end
    });
    let current = await stores.recordHooks(row.id, hooks);
    let currencyError: string | undefined;
    if (work.readCurrency) {
      const currency = await fetchCurrency(current, credentials, settings, signal);
      if ('error' in currency) currencyError = currency.error;
      else current = await stores.setCurrency(row.id, currency.currency);
    }
    if (work.importAs) await sync.start(row.id, work.importAs);
    return currencyError === undefined ? {} : { currencyError };
  }
  const handlers: Record<string, JobHandler> = {
    [CONNECT_JOB]: async (job, signal) => {
      await connect(job.storeId, job.payload as unknown as ConnectWork, signal);
    },
  };
  return { connect, handlers };
}
