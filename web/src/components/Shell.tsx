import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { signOut, type Credential } from '../lib/auth.ts';
import { hrefOf, navigate } from '../lib/router.ts';
import type { PageRoute } from '../pages/routes.ts';

interface ShellProps {
  readonly credential: Credential;
  readonly routes: readonly PageRoute[];
  readonly current: string;
  readonly children: ComponentChildren;
}

/** The header, the nav of every page this credential may open (a menu button below 760 px) and the page. */
export function Shell({ credential, routes, current, children }: ShellProps) {
  const [open, setOpen] = useState(false);
  const follow = (segment: string) => (event: MouseEvent) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    setOpen(false);
    navigate(segment);
  };
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Lagoon</span>
        <button type="button" class="menu" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          Menu
        </button>
        <span class="who" title={credential.label}>
          {credential.kind === 'operator' ? 'Operator' : credential.label}
        </span>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav id="nav" aria-label="Pages" class={open ? 'nav open' : 'nav'}>
        <ul>
          {routes.map((route) => (
            <li key={route.segment}>
              <a
                href={hrefOf(route.segment)}
                aria-current={route.segment === current ? 'page' : undefined}
                onClick={follow(route.segment)}
              >
                {route.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
