import { useCallback, useState } from 'preact/hooks';
import { api, listStores, type Removal, type Store, type SyncView } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { usePollWhile } from '../poll.ts';
import { BASE, navigate } from '../router.ts';
import { inWords } from '../words.ts';
import { RemovalNotice, RemoveStore } from './store-removal.tsx';
import { Badge, CopyButton, DataTable, Empty, ErrorNotice, formatNumber, formatTime, Loading, Notice, PageHeader, TextField, useAction, useLoad } from '../ui.tsx';

type Platform = Store['platform'];
type AMode = 'own-app' | 'via-app' | 'token-only';

const PLATFORMS: { id: Platform; name: string; domainHint: string }[] = [
  { id: 'platform-a', name: 'Platform A', domainHint: 'The shop’s platform domain, <name>.myplatform-a.com (or your instance’s suffix).' },
  { id: 'platform-b', name: 'Platform B', domainHint: 'The storefront’s domain.' },
  { id: 'platform-c', name: 'Platform C', domainHint: 'The storefront’s domain.' },
];
const A_MODES: [AMode, string, string][] = [
  ['own-app', 'The store’s own app', 'svc registers the product webhooks; deliveries are signed with the app’s client secret.'],
  ['via-app', 'Installed through svc’s app', 'The platform registers the webhooks; deliveries are signed with SVC_PLATFORM_A_APP_SECRET.'],
  ['token-only', 'Permanent access token only', 'No webhooks: the catalogue is not kept in sync by deliveries.'],
];

/** Exactly the credential fields each platform needs (and, for platform A, each connection mode). */
const FIELDS: Record<Platform | AMode, [string, string, string][]> = {
  'own-app': [
    ['clientSecret', 'Client secret', 'The app’s client secret: the key that signs webhook deliveries.'],
    ['accessToken', 'Admin API access token', 'Used to register webhooks and read the shop’s currency.'],
  ],
  'via-app': [],
  'token-only': [['accessToken', 'Admin API access token', 'A permanent token; no webhooks are registered.']],
  'platform-a': [],
  'platform-b': [
    ['storeHash', 'Store hash', 'Letters and digits, from the API path stores/<hash>/.'],
    ['accessToken', 'API account access token', 'Needs Products, Content and Information & Settings, read-only.'],
  ],
  'platform-c': [
    ['siteUrl', 'Site URL', 'The store’s address, such as https://shop.example.com.'],
    ['consumerKey', 'REST API consumer key', 'ck_…'],
    ['consumerSecret', 'REST API consumer secret', 'cs_…'],
  ],
};

function CredentialFields({ platform, onChange }: { platform: Platform; onChange: (credentials: Record<string, string | boolean> | null) => void }) {
  const [mode, setMode] = useState<AMode>('own-app');
  const [values, setValues] = useState<Record<string, string>>({});
  const fields = FIELDS[platform === 'platform-a' ? mode : platform];
  const report = (nextMode: AMode, nextValues: Record<string, string>) => {
    const list = FIELDS[platform === 'platform-a' ? nextMode : platform];
    if (platform === 'platform-a' && nextMode === 'via-app') return onChange({ viaApp: true });
    const complete = list.every(([name]) => (nextValues[name] ?? '').trim() !== '');
    onChange(complete ? Object.fromEntries(list.map(([name]) => [name, nextValues[name]!.trim()])) : null);
  };
  return (
    <>
      {platform === 'platform-a' ? (
        <fieldset class="field">
          <legend>How is svc connected?</legend>
          {A_MODES.map(([id, label, what]) => (
            <label class="check" key={id}>
              <input
                type="radio"
                name="a-mode"
                value={id}
                checked={mode === id}
                onChange={() => {
                  setMode(id);
                  report(id, values);
                }}
              />
              <span>
                {label} <span class="muted">{what}</span>
              </span>
            </label>
          ))}
        </fieldset>
      ) : null}
      {fields.map(([name, label, hint]) => (
        <TextField
          key={`${platform}-${mode}-${name}`}
          label={label}
          hint={hint}
          type={name === 'siteUrl' ? 'url' : 'password'}
          autoComplete="off"
          spellcheck={false}
          value={values[name] ?? ''}
          onValue={(value) => {
            const next = { ...values, [name]: value };
            setValues(next);
            report(mode, next);
          }}
        />
      ))}
    </>
  );
}

function hooksBadge(store: Store) {
  const tone = store.hooks.status === 'registered' || store.hooks.status === 'platform_managed' ? 'ok' : store.hooks.status === 'failed' ? 'danger' : store.hooks.status === 'registering' ? 'accent' : 'neutral';
  return <Badge tone={tone}>{store.hooks.status.replaceAll('_', ' ')}</Badge>;
}

const statusBadge = (store: Store) =>
  store.status === 'active' ? <Badge tone="ok">active</Badge> : <Badge tone="danger">{store.disconnectedAt ? 'disconnected' : store.signalsWithdrawnAt ? 'uninstalled' : 'inactive'}</Badge>;

/** The kinds a sync pass reads, in the order they are shown. */
const SYNC_KINDS = ['products', 'categories', 'pages'] as const;

const syncCounts = (sync: SyncView) => SYNC_KINDS.map((kind) => `${sync.kinds[kind].items.toLocaleString()} ${kind}`).join(' · ');

const SYNC_BADGES: Record<SyncView['state'], [tone: 'accent' | 'danger' | 'ok' | 'warn', label: string]> = { running: ['accent', 'running'], paused: ['warn', 'paused'], failed: ['danger', 'failed'], idle: ['ok', 'idle'] };

/**
 * Idle (never synced, or the last pass completed), running with what it has read (and, while a page
 * is retried, when its next attempt is), paused, or failed with the reason; when a pass last
 * completed and when the schedule starts the next. `brief` (the store list) keeps a long reason to
 * two lines, the whole of it in its tooltip.
 */
function SyncSummary({ sync, brief = false }: { sync: SyncView; brief?: boolean }) {
  const [tone, label] = SYNC_BADGES[sync.state];
  const failed = sync.state === 'failed';
  return (
    <div class={brief ? 'sync-summary brief' : 'sync-summary'}>
      {sync.state === 'idle' && !sync.startedAt ? <Badge>never synced</Badge> : <Badge tone={tone}>{label}</Badge>}
      {sync.state === 'running' ? <span>{syncCounts(sync)}</span> : null}
      {sync.state === 'paused' ? <span class="muted">since {formatTime(sync.pausedAt)}: no pass runs until it is resumed</span> : null}
      {sync.error ? (
        <span class={failed ? 'sync-error' : 'muted'} title={sync.error}>
          {failed ? sync.error : `${sync.state === 'paused' ? 'last error' : 'retrying'}: ${sync.error}`}
        </span>
      ) : null}
      {sync.retry && sync.state === 'running' ? (
        <span class="muted">
          attempt {sync.retry.failedAttempts} of {sync.retry.maxAttempts} failed; next at {formatTime(sync.retry.nextAttemptAt)}
        </span>
      ) : null}
      <span class="muted">last completed {formatTime(sync.lastCompletedAt)}</span>
      {sync.nextScheduledAt ? (
        <span class="muted">
          next pass {formatTime(sync.nextScheduledAt)}
          {sync.failedPasses > 0 ? ` (later after ${sync.failedPasses} failed ${sync.failedPasses === 1 ? 'pass' : 'passes'})` : ''}
        </span>
      ) : null}
    </div>
  );
}

/** `POST .../sync`: a pass now, unless one is running (the button says so instead). */
function SyncNow({ store, onStarted }: { store: Store; onStarted: (store: Store) => void }) {
  const action = useAction();
  const running = store.sync.state === 'running';
  const paused = store.sync.state === 'paused';
  const start = async () => {
    const next = await action.run(() => api<Store>(`/api/v1/admin/stores/${encodeURIComponent(store.id)}/sync`, { method: 'POST' }));
    if (next) onStarted(next);
  };
  return (
    <>
      <button type="button" class="button secondary" onClick={start} disabled={action.busy || running || paused || store.status !== 'active'} aria-label={`Sync ${store.domain} now`}>
        {running ? 'Syncing…' : 'Sync now'}
      </button>
      <ErrorNotice error={action.error} />
    </>
  );
}

/** `POST .../sync/pause` and `.../sync/resume`: no pass runs while paused. */
function PauseSync({ store, onChanged }: { store: Store; onChanged: (store: Store) => void }) {
  const action = useAction();
  const paused = store.sync.state === 'paused';
  const toggle = async () => {
    const next = await action.run(() => api<Store>(`/api/v1/admin/stores/${encodeURIComponent(store.id)}/sync/${paused ? 'resume' : 'pause'}`, { method: 'POST' }));
    if (next) onChanged(next);
  };
  return (
    <>
      <button type="button" class="button secondary" onClick={toggle} disabled={action.busy}>
        {paused ? 'Resume sync' : 'Pause sync'}
      </button>
      <ErrorNotice error={action.error} />
    </>
  );
}

/**
 * Load `stores` again while any has a pass running or its hooks being registered in the background
 * (poll.ts: every 2 s, slowing to 30 s while nothing changes; never while nothing runs).
 */
function useSyncRefresh(stores: Store[] | null | undefined, reload: () => void) {
  const running = (stores ?? []).some((store) => store.sync.state === 'running' || store.hooks.status === 'registering');
  usePollWhile(running, stores, JSON.stringify(stores ?? null), reload);
}

/** The last removal answered on a store's page, shown once by the store list it returns to. */
let removedFromDetail: { removal: Removal; domain: string } | null = null;

/** The optional `currency` of a store body: ISO 4217, as typed in any case; nothing when left empty. */
const currencyOf = (typed: string) => (typed.trim() ? { currency: typed.trim().toUpperCase() } : {});

function ConnectStore({ onConnected }: { onConnected: (store: Store) => void }) {
  const [platform, setPlatform] = useState<Platform>('platform-a');
  const [domain, setDomain] = useState('');
  const [currency, setCurrency] = useState('');
  const [credentials, setCredentials] = useState<Record<string, string | boolean> | null>(null);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!credentials) return;
    const body = { platform, domain: domain.trim(), credentials, ...currencyOf(currency) };
    const store = await action.run(() => api<Store>('/api/v1/admin/stores', { method: 'POST', body }));
    if (store) onConnected(store);
  };
  return (
    <section class="card" aria-labelledby="connect">
      <h2 id="connect">Connect a store</h2>
      <form onSubmit={submit}>
        <fieldset class="field">
          <legend>Platform</legend>
          <div class="segmented">
            {PLATFORMS.map((p) => (
              <label key={p.id}>
                <input
                  type="radio"
                  name="platform"
                  value={p.id}
                  checked={platform === p.id}
                  onChange={() => {
                    setPlatform(p.id);
                    setCredentials(null);
                  }}
                />
                <span>{p.name}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <TextField label="Store domain" value={domain} onValue={setDomain} required hint={PLATFORMS.find((p) => p.id === platform)!.domainHint} />
        <CredentialFields key={platform} platform={platform} onChange={setCredentials} />
        <TextField label="Currency (optional)" value={currency} onValue={setCurrency} maxLength={3} placeholder="EUR" hint="ISO 4217. Left empty, svc reads it from the platform where it can (not for a store of svc’s app: give it here)." />
        <ErrorNotice error={action.error} />
        <button class="button" type="submit" disabled={action.busy || !credentials || domain.trim() === ''}>
          {action.busy ? 'Connecting…' : 'Connect store'}
        </button>
      </form>
    </section>
  );
}

function StoreDetail({ id }: { id: string }) {
  const store = useLoad(() => api<Store>(`/api/v1/admin/stores/${encodeURIComponent(id)}`), [id]);
  const [credentials, setCredentials] = useState<Record<string, string | boolean> | null>(null);
  const [currency, setCurrency] = useState('');
  const [result, setResult] = useState<Store | null>(null);
  const [disconnect, setDisconnect] = useState<Removal | null>(null);
  const action = useAction();
  const shown = result ?? store.data;
  const refresh = useCallback(() => {
    setResult(null);
    store.reload();
  }, [store.reload]);
  useSyncRefresh(shown ? [shown] : null, refresh);
  const registerHooks = async () => {
    const next = await action.run(() => api<Store>(`/api/v1/admin/stores/${encodeURIComponent(id)}/hooks`, { method: 'POST' }));
    if (next) setResult(next);
  };
  const saveCredentials = async (event: Event) => {
    event.preventDefault();
    const next = await action.run(() => api<Store>(`/api/v1/admin/stores/${encodeURIComponent(id)}/credentials`, { method: 'PUT', body: { credentials, ...currencyOf(currency) } }));
    if (next) setResult(next);
  };
  return (
    <>
      <p>
        <a href={`${BASE}/stores`}>← All stores</a>
      </p>
      <PageHeader title={shown?.domain ?? 'Store'} />
      <ErrorNotice error={store.error ?? action.error} />
      {store.loading && !shown ? <Loading what="the store" /> : null}
      {shown ? (
        <div class="detail-grid">
          <section class="card">
            <h2>Status</h2>
            {disconnect ? <RemovalNotice removal={disconnect} domain={shown.domain} /> : null}
            {shown.status === 'inactive' ? (
              <Notice kind="warn">
                {shown.disconnectedAt
                  ? `Disconnected on ${formatTime(shown.disconnectedAt)}: no webhooks, no sync, its signals and widget withdrawn; its data is kept. Saving credentials again reconnects it.`
                  : shown.signalsWithdrawnAt
                    ? `The store uninstalled svc on ${formatTime(shown.deactivatedAt)}; its signals are withdrawn. Saving credentials again reconnects it.`
                    : 'This store is inactive; webhooks for it are acknowledged and ignored.'}
              </Notice>
            ) : null}
            {shown.currencyError ? <Notice kind="warn">Currency: {shown.currencyError}</Notice> : null}
            <dl class="facts">
              <dt>Platform</dt>
              <dd>{inWords(shown.platform)}</dd>
              <dt>Status</dt>
              <dd>{statusBadge(shown)}</dd>
              <dt>Connection</dt>
              <dd>{shown.credentialKind}</dd>
              <dt>Currency</dt>
              <dd>{shown.currency ?? '—'}</dd>
              <dt>Connected</dt>
              <dd>{formatTime(shown.createdAt)}</dd>
              <dt>Store id</dt>
              <dd>
                <code>{shown.id}</code>
              </dd>
            </dl>
            <p>
              <a href={`${BASE}/catalogue?store=${shown.id}`}>Catalogue</a> · <a href={`${BASE}/faqs?store=${shown.id}`}>FAQs</a>
            </p>
          </section>
          <section class="card" aria-labelledby="hooks">
            <h2 id="hooks">Webhooks</h2>
            <dl class="facts">
              <dt>Registration</dt>
              <dd>{hooksBadge(shown)}</dd>
              <dt>Topics</dt>
              <dd>{shown.hooks.topics.length ? shown.hooks.topics.map((t) => <code key={t}>{t}</code>) : '—'}</dd>
              <dt>Registered</dt>
              <dd>{formatTime(shown.hooks.registeredAt)}</dd>
              <dt>Confirmed by the platform</dt>
              <dd>{formatTime(shown.hooks.confirmedAt)}</dd>
              <dt>Delivery URL</dt>
              <dd class="wrap">
                <code>{shown.webhookUrl}</code> <CopyButton text={shown.webhookUrl} />
              </dd>
            </dl>
            {shown.hooks.status === 'registering' ? <Notice kind="warn">svc is registering the webhooks with the platform; this page shows the outcome when it is known.</Notice> : null}
            {shown.hooks.error ? (
              <Notice kind="error">
                {shown.hooks.status === 'unregister_failed'
                  ? `svc could not delete its webhooks when the store was disconnected (${shown.hooks.error}): remove those that deliver to ${shown.webhookUrl} in the platform's admin, or remove the store to ask again.`
                  : `Registration failed: ${shown.hooks.error}`}
              </Notice>
            ) : null}
            {shown.status === 'active' && (shown.hooks.status === 'registered' || shown.hooks.status === 'failed' || shown.hooks.status === 'pending') ? (
              <button type="button" class="button secondary" onClick={registerHooks} disabled={action.busy}>
                {shown.hooks.status === 'registered' ? 'Register again' : 'Retry registration'}
              </button>
            ) : null}
          </section>
          <section class="card wide" aria-labelledby="sync">
            <h2 id="sync">Catalogue sync</h2>
            <SyncSummary sync={shown.sync} />
            <DataTable
              caption="Catalogue sync per kind"
              columns={[{ label: 'Kind' }, { label: 'State' }, { label: 'Pages', class: 'num' }, { label: 'Items', class: 'num' }, { label: 'Last completed' }]}
              rows={SYNC_KINDS.map((kind) => {
                const k = shown.sync.kinds[kind];
                return {
                  key: kind,
                  header: true,
                  cells: [
                    kind,
                    <>
                      {k.state}
                      {/* The store's reason is shown above: a kind repeats only a reason of its own. */}
                      {k.error && k.error !== shown.sync.error ? <span class={k.state === 'failed' ? 'sync-error' : 'muted'}> — {k.error}</span> : null}
                    </>,
                    formatNumber(k.pages),
                    formatNumber(k.items),
                    formatTime(k.lastCompletedAt),
                  ],
                };
              })}
            />
            <p class="muted">
              Started {formatTime(shown.sync.startedAt)}
              {shown.sync.trigger ? ` (${shown.sync.trigger})` : ''}
              {shown.sync.finishedAt ? `, finished ${formatTime(shown.sync.finishedAt)}` : ''}.
            </p>
            <div class="button-row">
              <SyncNow store={shown} onStarted={setResult} />
              {shown.status === 'active' ? <PauseSync store={shown} onChanged={setResult} /> : null}
            </div>
          </section>
          <section class="card" aria-labelledby="credentials">
            <h2 id="credentials">Replace credentials</h2>
            <form onSubmit={saveCredentials}>
              <CredentialFields platform={shown.platform} onChange={setCredentials} />
              <TextField label="Currency (optional)" value={currency} onValue={setCurrency} maxLength={3} placeholder="EUR" hint="ISO 4217: replaces the store’s currency. Left empty, svc reads it from the platform if it is not known yet." />
              <button class="button" type="submit" disabled={action.busy || !credentials}>
                Save credentials and register webhooks
              </button>
            </form>
          </section>
          <RemoveStore
            store={shown}
            onDone={(removal) => {
              if (removal.store) {
                setDisconnect(removal);
                setResult(removal.store);
                return;
              }
              removedFromDetail = { removal, domain: shown.domain };
              navigate('/stores');
            }}
          />
        </div>
      ) : null}
    </>
  );
}

export function Stores({ params }: PageProps) {
  return params[0] ? <StoreDetail id={params[0]} /> : <StoreList />;
}

function StoreList() {
  const stores = useLoad(listStores, []);
  const [connected, setConnected] = useState<Store | null>(null);
  const [removed] = useState(() => {
    const shown = removedFromDetail;
    removedFromDetail = null;
    return shown;
  });
  useSyncRefresh(stores.data, stores.reload);
  return (
    <>
      <PageHeader title="Stores" />
      {removed ? <RemovalNotice removal={removed.removal} domain={removed.domain} /> : null}
      {connected ? (
        <Notice kind={connected.hooks.status === 'failed' ? 'warn' : 'ok'}>
          Connected {connected.domain}: webhooks {connected.hooks.status.replaceAll('_', ' ')}
          {connected.hooks.topics.length ? ` (${connected.hooks.topics.join(', ')})` : ''}. <a href={`${BASE}/stores/${connected.id}`}>Open the store</a>
        </Notice>
      ) : null}
      <section class="card" aria-labelledby="store-list">
        <h2 id="store-list">Connected stores</h2>
        <ErrorNotice error={stores.error} />
        {stores.loading && !stores.data ? <Loading what="stores" /> : null}
        {stores.data && stores.data.length === 0 ? <Empty>No stores yet. Connect one below.</Empty> : null}
        {stores.data && stores.data.length > 0 ? (
          <DataTable
            caption="Connected stores"
            columns={[{ label: 'Store' }, { label: 'Platform' }, { label: 'Status' }, { label: 'Webhooks' }, { label: 'Currency' }, { label: 'Connected' }, { label: 'Catalogue sync', class: 'sync-cell' }]}
            rows={stores.data.map((store) => ({
              key: store.id,
              cells: [
                <a href={`${BASE}/stores/${store.id}`}>{store.domain}</a>,
                inWords(store.platform),
                statusBadge(store),
                hooksBadge(store),
                store.currency ?? '—',
                formatTime(store.createdAt),
                <>
                  <SyncSummary sync={store.sync} brief />
                  <SyncNow store={store} onStarted={stores.reload} />
                </>,
              ],
            }))}
          />
        ) : null}
      </section>
      <ConnectStore
        onConnected={(store) => {
          setConnected(store);
          stores.reload();
        }}
      />
    </>
  );
}
