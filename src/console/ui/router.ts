// Client-side routes under /console: the server answers every /console/* path with this app.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';
const EVENT = 'svc:navigate';

export interface Route {
  /** Path below /console, starting with `/`. */
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(location.search) };
}

let navigated = false;
/** True once the user has moved between pages (focus then goes to the new page's heading). */
export const hasNavigated = () => navigated;

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  navigated = true;
  const url = BASE + (to === '/' ? '' : to);
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  dispatchEvent(new Event(EVENT));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => {
      navigated = true;
      setRoute(current());
    };
    addEventListener('popstate', update);
    addEventListener(EVENT, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(EVENT, update);
    };
  }, []);
  return route;
}

/** The app's own links: real hrefs (open in a new tab works), navigated in place on a plain click. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element).closest?.('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const href = anchor.getAttribute('href');
  if (!href || !href.startsWith(`${BASE}/`) || anchor.target) return;
  event.preventDefault();
  navigate(href.slice(BASE.length));
}
