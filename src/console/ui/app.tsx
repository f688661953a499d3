import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, isAdmin, onSessionEnded, type Session } from './api.ts';
import { Catalogue } from './pages/catalogue.tsx';
import { Faqs } from './pages/faqs.tsx';
import { Keys } from './pages/keys.tsx';
import { Leads } from './pages/leads.tsx';
import { Overview } from './pages/overview.tsx';
import { ScanDetail, Scans } from './pages/scans.tsx';
import { Stores } from './pages/stores.tsx';
import { WidgetBuilder } from './pages/widget.tsx';
import { BASE, navigate, onLinkClick, useRoute, type Route } from './router.ts';
import { SignIn } from './signin.tsx';
import { Loading } from './ui.tsx';

export interface PageProps {
  route: Route;
  /** Path segments after the section, e.g. ['abc'] for /scans/abc. */
  params: string[];
  session: Session;
  baseUrl: string;
}

interface Section {
  path: string;
  label: string;
  admin: boolean;
  page: ComponentType<PageProps>;
}

/** What each scope may open: dashboard:read sees Overview and Scans; admin sees everything. */
const SECTIONS: Section[] = [
  { path: '/overview', label: 'Overview', admin: false, page: Overview },
  { path: '/scans', label: 'Scans', admin: false, page: Scans },
  { path: '/keys', label: 'Keys', admin: true, page: Keys },
  { path: '/leads', label: 'Leads', admin: true, page: Leads },
  { path: '/stores', label: 'Stores', admin: true, page: Stores },
  { path: '/catalogue', label: 'Catalogue', admin: true, page: Catalogue },
  { path: '/faqs', label: 'FAQs', admin: true, page: Faqs },
  { path: '/widget', label: 'Widget', admin: true, page: WidgetBuilder },
];

function Content({ route, session, baseUrl }: { route: Route; session: Session; baseUrl: string }) {
  const section = SECTIONS.find((s) => route.path === s.path || route.path.startsWith(`${s.path}/`));
  if (!section) {
    return (
      <main id="main" class="content">
        <h1>Not found</h1>
        <p>
          There is no console page at <code>{BASE + route.path}</code>. <a href={`${BASE}/overview`}>Go to the overview</a>.
        </p>
      </main>
    );
  }
  if (section.admin && !isAdmin(session)) {
    return (
      <main id="main" class="content">
        <h1>{section.label}</h1>
        <p>This page needs a key with the admin scope. You are signed in with {session.key.scopes.join(', ')}.</p>
      </main>
    );
  }
  const params = route.path.slice(section.path.length).split('/').filter(Boolean).map(decodeURIComponent);
  const Page = section.page;
  if (section.path === '/scans' && params.length > 0) {
    return (
      <main id="main" class="content">
        <ScanDetail id={params[0]!} />
      </main>
    );
  }
  return (
    <main id="main" class="content">
      <Page route={route} params={params} session={session} baseUrl={baseUrl} />
    </main>
  );
}

export function App({ siteName, baseUrl }: { siteName: string; baseUrl: string }) {
  const route = useRoute();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [ended, setEnded] = useState(false);

  useEffect(() => {
    onSessionEnded(() => {
      setSession(null);
      setEnded(true);
    });
    // 204 (undefined): no live session, an answer rather than an error.
    api<Session | undefined>('/api/v1/console/session').then((current) => setSession(current ?? null), () => setSession(null));
  }, []);
  useEffect(() => {
    if (session && (route.path === '/' || route.path === '')) navigate('/overview', { replace: true });
  }, [session, route.path]);

  if (session === undefined) return <Loading what="the console" />;
  if (session === null) {
    return (
      <SignIn
        siteName={siteName}
        ended={ended}
        onSignedIn={(next) => {
          setEnded(false);
          setSession(next);
        }}
      />
    );
  }
  const signOut = async () => {
    await api('/api/v1/console/session', { method: 'DELETE' }).catch(() => undefined);
    setSession(null);
  };
  const visible = SECTIONS.filter((s) => !s.admin || isAdmin(session));
  return (
    <div class="layout" onClick={onLinkClick}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={`${BASE}/overview`}>
          <span class="brand-mark" aria-hidden="true" />
          {siteName}
        </a>
        <div class="who">
          <span class="muted">
            {session.key.name || session.key.keyPrefix + '…'} · {session.key.scopes.join(', ')}
          </span>
          <button type="button" class="button secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav class="sidenav" aria-label="Console">
        <ul>
          {visible.map((s) => {
            const current = route.path === s.path || route.path.startsWith(`${s.path}/`);
            return (
              <li key={s.path}>
                <a href={BASE + s.path} aria-current={current ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
      <Content route={route} session={session} baseUrl={baseUrl} />
    </div>
  );
}
