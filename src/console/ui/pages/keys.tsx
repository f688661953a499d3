import { useState } from 'preact/hooks';
import { api, isWidgetKey, listKeys, listStores, type ApiKey, type Session } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { navigate } from '../router.ts';
import { Badge, ConfirmButton, DataTable, Empty, ErrorNotice, formatTime, Loading, OnceSecret, PageHeader, SelectField, splitList, TextArea, TextField, useAction, useLoad } from '../ui.tsx';
import { rememberWidgetKey } from './widget.tsx';

const SCOPES: [string, string][] = [
  ['admin', 'Everything, including this console (implies every other scope)'],
  ['dashboard:read', 'Read scans and stats (the console’s Overview and Scans)'],
  ['probe:scan', 'Send signed scans (the highest rate-limit tier)'],
  ['products:read', 'The FAQ widget (bind it to a store and list the storefront’s domains)'],
];

function CreateKey({ onCreated }: { onCreated: () => void }) {
  const stores = useLoad(listStores, []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [domains, setDomains] = useState('');
  const [storeId, setStoreId] = useState('');
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const action = useAction();
  const toggle = (scope: string, on: boolean) => setScopes((list) => (on ? [...list, scope] : list.filter((s) => s !== scope)));
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = { name: name.trim() || undefined, scopes, allowedDomains: splitList(domains), storeId: storeId || null };
    const key = await action.run(() => api<ApiKey & { key: string }>('/api/v1/admin/keys', { method: 'POST', body }));
    if (!key) return;
    setCreated(key);
    setName('');
    setScopes([]);
    setDomains('');
    setStoreId('');
    onCreated();
  };
  return (
    <section class="card" aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      {created ? (
        <OnceSecret title={`New key${created.name ? ` “${created.name}”` : ''}`} value={created.key}>
          {isWidgetKey(created) ? (
            <button
              type="button"
              class="button secondary small"
              onClick={() => {
                rememberWidgetKey(created.key);
                navigate('/widget');
              }}
            >
              Build a widget snippet with this key
            </button>
          ) : null}
        </OnceSecret>
      ) : null}
      <form onSubmit={submit}>
        <ErrorNotice error={action.error} />
        <TextField label="Name" value={name} onValue={setName} maxLength={100} placeholder="storefront widget" />
        <fieldset class="field">
          <legend>Scopes</legend>
          {SCOPES.map(([scope, what]) => (
            <label class="check" key={scope}>
              <input type="checkbox" name="scope" value={scope} checked={scopes.includes(scope)} onChange={(e) => toggle(scope, e.currentTarget.checked)} />
              <span>
                <code>{scope}</code> <span class="muted">{what}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <TextArea label="Allowed domains" value={domains} onValue={setDomains} rows={2} hint="For widget keys: the storefront hosts, one per line or comma-separated; *.example.com allows subdomains." />
        <SelectField
          label="Store"
          value={storeId}
          onValue={setStoreId}
          options={[['', 'Not bound to a store'], ...(stores.data ?? []).map((s): [string, string] => [s.id, `${s.domain} (${s.platform})`])]}
          hint="Widget keys must be bound to the store whose FAQs they show."
        />
        <button class="button" type="submit" disabled={action.busy || scopes.length === 0}>
          Create key
        </button>
      </form>
    </section>
  );
}

/** What revoking `key` costs beyond the key: this session when it is the session's key, and the last way into the admin pages. */
function revokeWarning(key: ApiKey, keys: ApiKey[], session: Session) {
  if (key.id !== session.key.id) return undefined;
  const otherAdmins = keys.filter((k) => k.id !== key.id && !k.revokedAt && k.scopes.includes('admin'));
  return otherAdmins.length > 0 ? (
    'You are signed in with this key: revoking it ends this session.'
  ) : (
    <>
      You are signed in with this key, and it is the last active admin key: revoking it ends this session, and no one can open the admin pages until an admin key is made on the server (
      <code>svc keys create --scopes admin</code>).
    </>
  );
}

export function Keys({ session }: PageProps) {
  const keys = useLoad(listKeys, []);
  const stores = useLoad(listStores, []);
  const action = useAction();
  const domainOf = (id: string | null) => (id ? (stores.data?.find((s) => s.id === id)?.domain ?? id) : '—');
  const revoke = async (key: ApiKey) => {
    await action.run(() => api(`/api/v1/admin/keys/${key.id}`, { method: 'DELETE' }));
    keys.reload();
  };
  return (
    <>
      <PageHeader title="API keys" />
      <CreateKey onCreated={keys.reload} />
      <section class="card" aria-labelledby="key-list">
        <h2 id="key-list">Keys</h2>
        <ErrorNotice error={keys.error ?? action.error} />
        {keys.loading && !keys.data ? <Loading what="keys" /> : null}
        {keys.data && keys.data.length === 0 ? <Empty>No keys yet.</Empty> : null}
        {keys.data && keys.data.length > 0 ? (
          <DataTable
            caption="API keys, newest first"
            columns={[
              { label: 'Name' },
              { label: 'Key' },
              { label: 'Scopes' },
              { label: 'Allowed domains' },
              { label: 'Store' },
              { label: 'Created' },
              { label: 'Status' },
              { label: 'Actions', class: 'actions', hideLabel: true },
            ]}
            rows={[...keys.data].reverse().map((key) => ({
              key: key.id,
              cells: [
                <>
                  {key.name || <span class="muted">unnamed</span>}
                  {key.id === session.key.id ? (
                    <>
                      {' '}
                      <Badge tone="accent">this session</Badge>
                    </>
                  ) : null}
                </>,
                <code>{key.keyPrefix}…</code>,
                key.scopes.join(', '),
                key.allowedDomains.join(', ') || '—',
                domainOf(key.storeId),
                formatTime(key.createdAt),
                // The last use shares the status cell: a column of its own would not fit 1280 px beside the actions.
                <>
                  {key.revokedAt ? <Badge tone="danger">revoked</Badge> : <Badge tone="ok">active</Badge>}
                  <div class="muted">{key.lastUsedAt ? `last used ${formatTime(key.lastUsedAt)}` : 'never used'}</div>
                </>,
                key.revokedAt ? null : (
                  <ConfirmButton
                    label="Revoke"
                    confirm={key.id === session.key.id ? `Revoke ${key.name || key.keyPrefix} and sign out` : `Revoke ${key.name || key.keyPrefix}`}
                    warning={revokeWarning(key, keys.data!, session)}
                    onConfirm={() => revoke(key)}
                    disabled={action.busy}
                  />
                ),
              ],
            }))}
          />
        ) : null}
      </section>
    </>
  );
}
