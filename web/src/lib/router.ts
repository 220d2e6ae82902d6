/*
 * Client-side routes under /dashboard (the server answers every /dashboard/* path with the console's html).
 * A route is a path segment: /dashboard/<segment>; pages are listed in web/src/pages/routes.ts.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/dashboard';

const listeners = new Set<() => void>();

/** The segment after /dashboard/ ('' for the console's home). */
export function currentSegment(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  return path.replace(/^\/+/, '').split('/')[0] ?? '';
}

export function hrefOf(segment: string): string {
  return segment ? `${BASE}/${segment}` : `${BASE}/`;
}

/** Goes to /dashboard/<segment>; `replace` takes the current history entry's place (a redirect, not a step back). */
export function navigate(segment: string, options: { replace?: boolean } = {}): void {
  if (currentSegment() === segment) return;
  if (options.replace) history.replaceState(null, '', hrefOf(segment));
  else history.pushState(null, '', hrefOf(segment));
  for (const listener of listeners) listener();
}

export function useSegment(): string {
  const [segment, setSegment] = useState(currentSegment);
  useEffect(() => {
    const update = () => setSegment(currentSegment());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return segment;
}
