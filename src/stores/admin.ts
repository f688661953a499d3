import type { Platform } from './types.ts';
import { ApiError, orNotFound } from '../lib/errors.ts';
import { isHostname } from '../lib/hostname.ts';
import { apiTargetOf } from '../platforms/clients.ts';
import { TargetRefused } from '../platforms/egress.ts';
import { checkStoreTarget, webhookUrlFor, type ConnectWork, type PlatformSettings, type StoreSync } from './connect.ts';
import { parseCredentials, type ParsedCredentials } from './credentials.ts';
import { toStoreView, type StoreRegistry, type StoreView, type StoreRecord } from './registry.ts';
import type { RemovalOutcome, StoreHoldings, StoreRemoval } from './removal.ts';
import { parseStoreSettings, type StoreSettings } from './settings.ts';
import type { NewJob } from '../webhooks/queue.ts';

export type { StoreSync };

export type StoreResponse<SyncView = unknown> = StoreView & { webhookUrl: string; sync: SyncView; currencyError?: string };

/** The answer of a removal or disconnect: what it did, and the disconnected store (null once removed). */
export type RemovalResponse<SyncView = unknown> = RemovalOutcome & { store: StoreResponse<SyncView> | null };

/**
 * Runs a store's connection (stores/connect.ts) in a job of its own, now: `stored`, the job stored
 * with the store's credentials, or else a new one; resolves with its outcome, or undefined when it
 * did not end in one (stopped by the shutdown).
 */
export type RunConnection = (storeId: string, work: ConnectWork, stored?: NewJob) => Promise<{ currencyError?: string } | undefined>;

interface AdminDeps<SyncView> {
  stores: StoreRegistry;
  settings: PlatformSettings & { platformAShopSuffix: string };
  sync: StoreSync<SyncView>;
  removal: Pick<StoreRemoval, 'remove' | 'holdings'>;
  connections: {
    /** The job that connects the store, to store with its credentials. */
    job: (storeId: string, work: ConnectWork) => NewJob;
    run: RunConnection;
    connectWithoutApi: (storeId: string, work: ConnectWork) => Promise<{ currencyError?: string }>;
  };
  /** How long a request that connects a store waits for the connection before answering with its state so far (it goes on in the background). */
  answerWithinMs: number;
}

/** The default of AdminDeps.answerWithinMs: a platform that answers at all registers well within it. */
export const CONNECT_ANSWER_MS = 5_000;

const conflict = () => new ApiError(409, 'store_exists', 'another store of this platform already uses this shop domain, store hash or site URL');
const beingRemoved = (id: string) => new ApiError(409, 'store_being_removed', `store ${id} is being removed or disconnected; try again once that has answered`);

/** Which field named a store-supplied target, for the 400 that refuses it. */
const targetField = (platform: Platform) => (platform === 'platform-c' ? 'credentials.siteUrl' : 'domain');

/**
 * Store administration: saving credentials commits the store with the job that connects it (hooks,
 * the currency when it was not given, then an import), and runs that job at once. The request
 * answers once that is done, or after `answerWithinMs` with the store as it is then (`hooks.status:
 * "registering"`): whatever the platform does, the connection goes on in the background and shows
 * on the store record. A store whose API target it names itself must not be a private address
 * (400 `private_target`, nothing saved) unless the operator allows it. Removing (or disconnecting)
 * a store is stores/removal.ts; while it runs, nothing else may change the store (409).
 */
export function createStoreAdmin<SyncView>({ stores, settings, sync, removal, connections, answerWithinMs }: AdminDeps<SyncView>) {
  const view = async (row: StoreRecord, extra: { currencyError?: string } = {}): Promise<StoreResponse<SyncView>> => ({ ...toStoreView(row), webhookUrl: webhookUrlFor(settings.baseUrl, row), sync: await sync.view(row.id), ...extra });
  const find = async (id: string) => orNotFound(await stores.get(id), 'store', id);
  /**
   * Stores being removed or disconnected (in this process): nothing else may change them meanwhile
   * (new credentials would reconnect a store whose data is about to go). Bounded by the stores.
   */
  const removing = new Set<string>();
  /** The store, unless it is being removed (409). */
  const findIdle = async (id: string) => {
    const row = await find(id);
    if (removing.has(row.id)) throw beingRemoved(row.id);
    return row;
  };

  async function refusePrivateTarget(platform: Platform, parsed: ParsedCredentials): Promise<void> {
    try {
      await checkStoreTarget(parsed.platformRef, parsed.credentials, settings);
    } catch (error) {
      if (!(error instanceof TargetRefused)) throw error;
      throw new ApiError(400, 'private_target', `${targetField(platform)}: ${error.message}; svc connects to public internet addresses only, unless the operator sets SVC_ALLOW_PRIVATE_TARGETS=1 (for stores on svc's own network)`);
    }
  }

  /**
   * The job that connects a store with these credentials, when they give svc API access (else it is
   * connected in the request). It is stored with them: a store never stands without it, where the
   * scheduled catalogue reconciliation (sync/service.ts) would start an import the connection then
   * starts over.
   */
  const connectionFor = (parsed: ParsedCredentials, work: ConnectWork, storeId: string): NewJob | undefined => (apiTargetOf(parsed, parsed.credentials, settings) ? connections.job(storeId, work) : undefined);

  async function connect(row: StoreRecord, work: ConnectWork, stored?: NewJob): Promise<StoreResponse<SyncView>> {
    // Without API access there is nothing to call: connected in the request.
    if (!apiTargetOf(row, stores.credentialsOf(row), settings)) {
      const outcome = await connections.connectWithoutApi(row.id, work);
      return view(await find(row.id), outcome);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      connections.run(row.id, work, stored),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), answerWithinMs);
      }),
    ]).finally(() => clearTimeout(timer));
    return view(await find(row.id), outcome ?? {});
  }

  return {
    list: async () => Promise.all((await stores.list()).map((row) => view(row))),
    get: async (id: string) => view(await find(id)),

    async create(input: { platform: Platform; domain: string; currency?: string | undefined; credentials: Record<string, unknown> }): Promise<StoreResponse<SyncView>> {
      const domain = input.domain.trim().toLowerCase().replace(/\.$/, '');
      if (!isHostname(domain)) throw new ApiError(400, 'invalid_domain', `domain ${JSON.stringify(input.domain)} is not a host name`);
      const parsed = parseCredentials(input.platform, domain, input.credentials, settings.platformAShopSuffix);
      await refusePrivateTarget(input.platform, parsed);
      const work: ConnectWork = { readCurrency: input.currency === undefined, importAs: 'connect' };
      let stored: NewJob | undefined;
      const row = await stores.create({ platform: input.platform, domain, currency: input.currency ?? null, parsed }, (storeId) => (stored = connectionFor(parsed, work, storeId)));
      if (!row) throw conflict();
      return connect(row, work, stored);
    },

    async saveCredentials(id: string, credentials: Record<string, unknown>, currency?: string): Promise<StoreResponse<SyncView>> {
      const row = await findIdle(id);
      const parsed = parseCredentials(row.platform, row.domain, credentials, settings.platformAShopSuffix);
      await refusePrivateTarget(row.platform, parsed);
      const current = await findIdle(id);
      const work: ConnectWork = { readCurrency: (currency ?? current.currency) === null, importAs: 'credentials' };
      const stored = connectionFor(parsed, work, current.id);
      const saved = await stores.saveCredentials(current, parsed, currency, stored);
      if (!saved) throw conflict();
      return connect(saved, work, stored);
    },

    settings: async (id: string): Promise<StoreSettings> => (await find(id)).settings,

    /** Validate and replace the store's settings (400 `invalid_settings` naming the field). */
    async saveSettings(id: string, input: unknown): Promise<StoreSettings> {
      await find(id);
      return orNotFound(await stores.saveSettings(id, parseStoreSettings(input)), 'store', id).settings;
    },

    /** A catalogue sync pass now (unless one is running; 409 while paused); the store with its sync state. */
    async sync(id: string): Promise<StoreResponse<SyncView>> {
      const row = await findIdle(id);
      await sync.request(row.id);
      return view(row);
    },

    /** Pause the store's catalogue sync (a step in hand is stopped first); the store with its sync state. */
    async pauseSync(id: string): Promise<StoreResponse<SyncView>> {
      const row = await findIdle(id);
      await sync.pause(row.id);
      return view(await find(id));
    },

    /** Resume the store's catalogue sync: a pass that was under way goes on. */
    async resumeSync(id: string): Promise<StoreResponse<SyncView>> {
      return view(orNotFound(await sync.resume((await findIdle(id)).id), 'store', id));
    },

    /** Retry a failed (or refresh a working) registration with the saved credentials. */
    async registerHooks(id: string): Promise<StoreResponse<SyncView>> {
      return connect(await findIdle(id), { readCurrency: false, importAs: null });
    },

    /** What svc holds for the store: what a removal would delete. */
    holdings: async (id: string): Promise<{ id: string; counts: StoreHoldings }> => ({ id, counts: orNotFound(await removal.holdings(id), 'store', id) }),

    /** Remove the store with everything svc holds for it, or (`keepData`) disconnect it; 409 while it is being removed already. */
    async remove(id: string, keepData: boolean): Promise<RemovalResponse<SyncView>> {
      const row = await findIdle(id);
      removing.add(row.id);
      try {
        const outcome = orNotFound(await removal.remove(row.id, keepData), 'store', id);
        return { ...outcome, store: keepData ? await view(await find(row.id)) : null };
      } finally {
        removing.delete(row.id);
      }
    },
  };
}
