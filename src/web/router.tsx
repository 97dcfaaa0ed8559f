import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useState } from 'react';

/** Every page lives under /ui/, so any of them is a link to share; the server answers index.html for each. */
const BASE = '/ui';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const current = (): Location => ({
  path: location.pathname.slice(BASE.length) || '/',
  query: new URLSearchParams(location.search),
});

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = BASE + to;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): Location {
  const [where, setWhere] = useState(current);
  useEffect(() => {
    const update = () => setWhere(current());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return where;
}

/** Changes some query parameters of the current page (empty values removed), keeping the path. */
export function setQuery(where: Location, changes: Record<string, string | number | undefined>): void {
  const query = new URLSearchParams(where.query);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === '') query.delete(name);
    else query.set(name, String(value));
  }
  const text = query.toString();
  navigate(`${where.path}${text ? `?${text}` : ''}`, { replace: true });
}

/** An ordinary link (open in a new tab works) that changes pages without reloading. */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
    scrollTo(0, 0);
  };
  return <a href={BASE + to} onClick={follow} {...rest} />;
}

/** This page's address with the key in it (`?key=`), for a colleague whose browser holds another key. */
export function shareLink(key: string): string {
  const url = new URL(location.href);
  url.searchParams.set('key', key);
  return url.href;
}
