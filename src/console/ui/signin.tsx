import { useState } from 'preact/hooks';
import { api, type Session } from './api.ts';
import { ErrorNotice, Notice, TextField, useAction } from './ui.tsx';

/** What sign-in says when a key cannot open the console. */
const SIGN_IN_SENTENCES = {
  invalid_api_key: 'svc does not know this key: check that you pasted all of it, and that it has not been revoked.',
  insufficient_scope: 'This key cannot open the console: it needs the admin or the dashboard:read scope.',
};

/** Paste an API key; the server answers with a session cookie. The key itself is not kept anywhere. */
export function SignIn({ siteName, ended, onSignedIn }: { siteName: string; ended: boolean; onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const session = await action.run(() => api<Session>('/api/v1/console/session', { method: 'POST', body: { key: key.trim() } }));
    setKey('');
    if (session) onSignedIn(session);
  };
  return (
    <main id="main" class="signin">
      <form class="card signin-card" onSubmit={submit}>
        <p class="brand">
          <span class="brand-mark" aria-hidden="true" />
          {siteName}
        </p>
        <h1>Sign in to the console</h1>
        {ended ? <Notice kind="warn">Your session has ended. Sign in again.</Notice> : null}
        <ErrorNotice error={action.error} sentences={SIGN_IN_SENTENCES} />
        <TextField
          label="API key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          placeholder="sk_live_…"
          value={key}
          onValue={setKey}
          required
          autoFocus
          hint={
            <>
              A key with the <code>admin</code> scope sees everything; <code>dashboard:read</code> sees the overview and scans. Create one with{' '}
              <code>svc keys create --scopes admin</code>.
            </>
          }
        />
        <button class="button" type="submit" disabled={action.busy || key.trim() === ''}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="field-hint">The key is exchanged for a session cookie and not stored in this browser.</p>
      </form>
    </main>
  );
}
