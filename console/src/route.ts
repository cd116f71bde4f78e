import { useEffect, useState } from 'react';

/**
 * The pages of the navigation, in its order: a new page is one entry here (its hash path, link
 * text and document title) and its view in App's VIEWS, which the type makes required.
 */
export const PAGES = [
  { page: 'log', path: '', label: 'Requests', title: 'Requests' },
  { page: 'charts', path: 'charts', label: 'Charts', title: 'Charts' },
  { page: 'spend', path: 'spend', label: 'Spend', title: 'Spend' },
  { page: 'playground', path: 'playground', label: 'Playground', title: 'Playground' },
  { page: 'keys', path: 'keys', label: 'Keys', title: 'Keys and projects' },
  { page: 'audit', path: 'audit', label: 'Audit', title: 'Audit log' },
  { page: 'reconcile', path: 'reconcile', label: 'Reconciliation', title: 'Reconciliation' },
] as const;

export type NavPage = (typeof PAGES)[number]['page'];

/** The console's pages, addressed by the URL's hash so that a reload or a shared link keeps the page. */
export type Route = { page: NavPage } | { page: 'request'; id: string };

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#\/?/, '');
  if (path.startsWith('requests/')) return { page: 'request', id: decodeURIComponent(path.slice('requests/'.length)) };
  return { page: PAGES.find((p) => p.path === path)?.page ?? 'log' };
}

export function pageHref(path: string): string {
  return `#/${path}`;
}

export function requestHref(id: string): string {
  return `#/requests/${encodeURIComponent(id)}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
