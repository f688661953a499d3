import { useState } from 'preact/hooks';
import { api, type Lead, type Page } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { Badge, ConfirmButton, DataTable, Empty, ErrorNotice, formatTime, Loading, OnceSecret, PageHeader, Pager, SelectField, TextField, useAction, useLoad, usePager } from '../ui.tsx';

export function Leads(_: PageProps) {
  const [email, setEmail] = useState('');
  const [verified, setVerified] = useState('');
  const [active, setActive] = useState('');
  const [applied, setApplied] = useState({ email: '', verified: '', active: '' });
  const pager = usePager();
  const leads = useLoad(() => api<Page<Lead>>('/api/v1/admin/leads', { query: { ...applied, cursor: pager.cursor, limit: 50 } }), [JSON.stringify(applied), pager.cursor]);
  const action = useAction();
  const [token, setToken] = useState<{ email: string; apiToken: string } | null>(null);

  const act = async (lead: Lead, verb: 'verify' | 'rotate-token' | 'revoke-token') => {
    const result = await action.run(() => api<{ apiToken?: string }>(`/api/v1/admin/leads/${lead.id}/${verb}`, { method: 'POST' }));
    if (result?.apiToken) setToken({ email: lead.email, apiToken: result.apiToken });
    leads.reload();
  };
  const filter = (event: Event) => {
    event.preventDefault();
    pager.reset();
    setApplied({ email: email.trim(), verified, active });
  };

  return (
    <>
      <PageHeader title="Leads" />
      <p class="muted">Scanner authors who signed up on the start page. Verify a lead to raise its token to the authed rate tier.</p>
      {token ? <OnceSecret title={`New token for ${token.email}`} value={token.apiToken} /> : null}
      <form class="filters card" onSubmit={filter} aria-label="Filter leads">
        <TextField label="Email" value={email} onValue={setEmail} placeholder="name@example.com" />
        <SelectField label="Verified" value={verified} onValue={setVerified} options={[['', 'Any'], ['true', 'Verified'], ['false', 'Not verified']]} />
        <SelectField label="Token" value={active} onValue={setActive} options={[['', 'Any'], ['true', 'Active'], ['false', 'Revoked']]} />
        <div class="filter-actions">
          <button class="button" type="submit">
            Apply filters
          </button>
        </div>
      </form>
      <ErrorNotice error={leads.error ?? action.error} />
      {leads.loading && !leads.data ? <Loading what="leads" /> : null}
      {leads.data && leads.data.items.length === 0 ? (
        applied.email || applied.verified || applied.active ? (
          <Empty>No leads match these filters.</Empty>
        ) : (
          <Empty>
            No sign-ups yet. Scanner authors sign up on the <a href="/">start page</a> (or with <code>POST /api/v1/public/leads</code>); each sign-up appears here to verify.
          </Empty>
        )
      ) : null}
      {leads.data && leads.data.items.length > 0 ? (
        <>
          <DataTable
            card
            caption="Leads, newest first"
            columns={[{ label: 'Email' }, { label: 'Signed up' }, { label: 'Verified' }, { label: 'Token' }, { label: 'Actions', class: 'actions', hideLabel: true }]}
            rows={leads.data.items.map((lead) => ({
              key: lead.id,
              cells: [
                <>
                  {lead.email}
                  {lead.repeatOf ? (
                    <>
                      {' '}
                      <span title="This address had signed up before: this sign-up is a lead of its own, and the first lead is unchanged. Sign-up never tells anyone whether an address is known.">
                        <Badge tone="warn">repeat sign-up</Badge>
                      </span>
                    </>
                  ) : null}
                </>,
                formatTime(lead.createdAt),
                lead.verified ? <Badge tone="ok">verified</Badge> : <Badge tone="warn">not verified</Badge>,
                lead.tokenActive ? <Badge tone="ok">active</Badge> : <Badge tone="danger">revoked</Badge>,
                <>
                  {lead.verified ? null : (
                    <button type="button" class="button secondary small" disabled={action.busy} onClick={() => act(lead, 'verify')}>
                      Verify
                    </button>
                  )}
                  <ConfirmButton label={lead.tokenActive ? 'Rotate token' : 'Issue token'} confirm="Issue a new token" onConfirm={() => act(lead, 'rotate-token')} disabled={action.busy} />
                  {lead.tokenActive ? <ConfirmButton label="Revoke" confirm={`Revoke ${lead.email}`} onConfirm={() => act(lead, 'revoke-token')} disabled={action.busy} /> : null}
                </>,
              ],
            }))}
          />
          <Pager pager={pager} nextCursor={leads.data.nextCursor} count={leads.data.items.length} />
        </>
      ) : null}
    </>
  );
}
