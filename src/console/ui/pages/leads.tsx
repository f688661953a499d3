import { useState } from 'preact/hooks';
import { api, type Lead, type Page } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { Badge, ConfirmButton, Empty, ErrorNotice, formatTime, Loading, OnceSecret, PageHeader, Pager, SelectField, TextField, useAction, useLoad, usePager } from '../ui.tsx';

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
      {leads.data && leads.data.items.length === 0 ? <Empty>No leads match.</Empty> : null}
      {leads.data && leads.data.items.length > 0 ? (
        <>
          <div class="table-wrap card">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Signed up</th>
                  <th scope="col">Verified</th>
                  <th scope="col">Token</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {leads.data.items.map((lead) => (
                  <tr key={lead.id}>
                    <td>
                      {lead.email}
                      {lead.repeatOf ? (
                        <>
                          {' '}
                          <span title="This address had signed up before: this sign-up is a lead of its own, and the first lead is unchanged. Sign-up never tells anyone whether an address is known.">
                            <Badge tone="warn">repeat sign-up</Badge>
                          </span>
                        </>
                      ) : null}
                    </td>
                    <td>{formatTime(lead.createdAt)}</td>
                    <td>{lead.verified ? <Badge tone="ok">verified</Badge> : <Badge tone="warn">not verified</Badge>}</td>
                    <td>{lead.tokenActive ? <Badge tone="ok">active</Badge> : <Badge tone="danger">revoked</Badge>}</td>
                    <td class="actions">
                      {lead.verified ? null : (
                        <button type="button" class="button secondary small" disabled={action.busy} onClick={() => act(lead, 'verify')}>
                          Verify
                        </button>
                      )}
                      <ConfirmButton label={lead.tokenActive ? 'Rotate token' : 'Issue token'} confirm="Issue a new token" onConfirm={() => act(lead, 'rotate-token')} disabled={action.busy} />
                      {lead.tokenActive ? <ConfirmButton label="Revoke" confirm={`Revoke ${lead.email}`} onConfirm={() => act(lead, 'revoke-token')} disabled={action.busy} /> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pager={pager} nextCursor={leads.data.nextCursor} count={leads.data.items.length} />
        </>
      ) : null}
    </>
  );
}
