import type { Platform, StoreRow } from '../db/schema/index.ts';
import { ApiError, orNotFound } from '../lib/errors.ts';
import { isHostname } from '../lib/hostname.ts';
import { fetchCurrency, registerHooks, webhookUrlFor, type PlatformSettings } from './connect.ts';
import { parseCredentials } from './credentials.ts';
import { toStoreView, type StoreRegistry, type StoreView } from './registry.ts';
import { parseStoreSettings, type StoreSettings } from './settings.ts';

/** What the store admin needs of catalogue sync: start a pass once a store is connected, and show its state. */
export interface StoreSync<View> {
  start(storeId: string, trigger: 'connect' | 'credentials'): void;
  request(storeId: string): void;
  view(storeId: string): View;
}

export type StoreResponse<SyncView = unknown> = StoreView & { webhookUrl: string; sync: SyncView; currencyError?: string };

interface AdminDeps<SyncView> {
  stores: StoreRegistry;
  settings: PlatformSettings & { platformAShopSuffix: string };
  sync: StoreSync<SyncView>;
}

const conflict = () => new ApiError(409, 'store_exists', 'another store of this platform already uses this shop domain, store hash or site URL');

/**
 * Store administration: saving credentials commits the store first, then registers hooks (and reads
 * the currency when it was not given) against the platform; failures are reported, not fatal.
 */
export function createStoreAdmin<SyncView>({ stores, settings, sync }: AdminDeps<SyncView>) {
  const view = (row: StoreRow, extra: { currencyError?: string } = {}): StoreResponse<SyncView> => ({ ...toStoreView(row), webhookUrl: webhookUrlFor(settings.baseUrl, row), sync: sync.view(row.id), ...extra });
  const find = (id: string) => orNotFound(stores.get(id), 'store', id);

  /** Hooks, then the currency when asked, then (for a new store or new credentials) a catalogue import with both in place. */
  async function connect(row: StoreRow, readCurrency: boolean, importAs: 'connect' | 'credentials' | null): Promise<StoreResponse<SyncView>> {
    const credentials = stores.credentialsOf(row);
    // Platform C pings each hook as it is created: only now may an unsigned ping confirm the store.
    const pinged = row.platform === 'platform-c';
    if (pinged) stores.awaitPing(row.id, 'registering');
    const hooks = await registerHooks(row, credentials, stores.webhookSecretOf(row), settings).finally(() => {
      if (pinged) stores.awaitPing(row.id, 'registered');
    });
    let current = stores.recordHooks(row.id, hooks);
    let currencyError: string | undefined;
    if (readCurrency) {
      const currency = await fetchCurrency(current, credentials, settings);
      if ('error' in currency) currencyError = currency.error;
      else current = stores.setCurrency(row.id, currency.currency);
    }
    if (importAs) sync.start(row.id, importAs);
    return view(current, currencyError === undefined ? {} : { currencyError });
  }

  return {
    list: () => stores.list().map((row) => view(row)),
    get: (id: string) => view(find(id)),

    async create(input: { platform: Platform; domain: string; currency?: string | undefined; credentials: Record<string, unknown> }): Promise<StoreResponse<SyncView>> {
      const domain = input.domain.trim().toLowerCase().replace(/\.$/, '');
      if (!isHostname(domain)) throw new ApiError(400, 'invalid_domain', `domain ${JSON.stringify(input.domain)} is not a host name`);
      const parsed = parseCredentials(input.platform, domain, input.credentials, settings.platformAShopSuffix);
      const row = stores.create({ platform: input.platform, domain, currency: input.currency ?? null, parsed });
      if (!row) throw conflict();
      return connect(row, input.currency === undefined, 'connect');
    },

    async saveCredentials(id: string, credentials: Record<string, unknown>, currency?: string): Promise<StoreResponse<SyncView>> {
      const row = find(id);
      const saved = stores.saveCredentials(row, parseCredentials(row.platform, row.domain, credentials, settings.platformAShopSuffix), currency);
      if (!saved) throw conflict();
      return connect(saved, saved.currency === null, 'credentials');
    },

    settings: (id: string): StoreSettings => find(id).settings,

    /** Validate and replace the store's settings (400 `invalid_settings` naming the field). */
    saveSettings(id: string, input: unknown): StoreSettings {
      find(id);
      return orNotFound(stores.saveSettings(id, parseStoreSettings(input)), 'store', id).settings;
    },

    /** A catalogue sync pass now (unless one is running); the store with its sync state. */
    sync(id: string): StoreResponse<SyncView> {
      const row = find(id);
      sync.request(row.id);
      return view(row);
    },

    /** Retry a failed (or refresh a working) registration with the saved credentials. */
    async registerHooks(id: string): Promise<StoreResponse<SyncView>> {
      return connect(find(id), false, null);
    },
  };
}
