import { type ComponentType, useEffect, useState } from 'react';
import { api, postJson } from './api.ts';
import { Audit } from './Audit.tsx';
import { Charts } from './Charts.tsx';
import { Keys } from './Keys.tsx';
import { Login } from './Login.tsx';
import { NamesProvider } from './names.tsx';
import { Playground } from './Playground.tsx';
import { Reconcile } from './Reconcile.tsx';
import { RequestLog } from './RequestLog.tsx';
import { RequestLookup } from './RequestLookup.tsx';
import { RequestView } from './RequestView.tsx';
import { Spend } from './Spend.tsx';
import { type NavPage, PAGES, pageHref, useRoute } from './route.ts';

type Session = 'checking' | 'out' | { storeContent: boolean };

/** Each page of the navigation's view (route.ts PAGES lists them). */
const VIEWS: Record<NavPage, ComponentType> = {
  log: RequestLog,
  charts: Charts,
  spend: Spend,
  playground: Playground,
  keys: Keys,
  audit: Audit,
  reconcile: Reconcile,
};

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>('checking');

  const check = () =>
    api<{ store_content: boolean }>('/console/api/session')
      .then((s) => setSession({ storeContent: s.store_content }))
      // Not logged in (401/403) or no answer: the login form says what the next attempt meets.
      .catch(() => setSession('out'));
  useEffect(() => void check(), []);
  // Each page its own title: what a screen reader announces and a tab or the history shows.
  useEffect(() => {
    const page = route.page === 'request' ? `Request ${route.id}` : PAGES.find((p) => p.page === route.page)?.title;
    document.title = session === 'out' ? 'Log in · sluice console' : `${page} · sluice console`;
  }, [route, session]);

  if (session === 'checking') return <p className="center">Loading…</p>;
  if (session === 'out') return <Login onLoggedIn={() => void check()} />;

  // A user signed in through SSO signs out of the identity provider too, when it offers that.
  const logout = () =>
    void postJson<{ end_session_url: string | null }>('/console/api/logout', {})
      .then((out) => {
        if (out.end_session_url) window.location.assign(out.end_session_url);
        else setSession('out');
      })
      .catch(() => setSession('out'));
  const View = route.page === 'request' ? undefined : VIEWS[route.page];
  return (
    <NamesProvider>
      <header className="top">
        <span className="brand">sluice</span>
        <nav aria-label="Console">
          {PAGES.map(({ page, path, label }) => (
            <a key={page} href={pageHref(path)} aria-current={route.page === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <RequestLookup />
        <button type="button" onClick={logout}>
          Log out
        </button>
      </header>
      <main>
        {route.page === 'request' && <RequestView id={route.id} storeContent={session.storeContent} />}
        {View && <View />}
      </main>
    </NamesProvider>
  );
}
