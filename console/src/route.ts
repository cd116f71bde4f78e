import { useEffect, useState } from 'react';

/** The console's pages, addressed by the URL's hash so that a reload or a shared link keeps the page. */
export type Route =
  | { page: 'log' }
  | { page: 'request'; id: string }
  | { page: 'playground' }
  | { page: 'charts' }
  | { page: 'keys' }
  | { page: 'audit' };

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#\/?/, '');
  if (path.startsWith('requests/')) return { page: 'request', id: decodeURIComponent(path.slice('requests/'.length)) };
  if (path === 'playground') return { page: 'playground' };
  if (path === 'charts') return { page: 'charts' };
  if (path === 'keys') return { page: 'keys' };
  if (path === 'audit') return { page: 'audit' };
  return { page: 'log' };
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
