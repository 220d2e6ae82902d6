/*
 * Every page of the console: its path segment (/dashboard/<segment>), nav title, who sees it, and its component.
 * To add or replace a page, change its entry here (docs/architecture.md, "The console (web/)").
 */
import type { ComponentType } from 'preact';
import { Jobs } from './Jobs.tsx';
import { Keys } from './Keys.tsx';
import { Models } from './Models.tsx';
import { Operator } from './Operator.tsx';
import { Overview } from './Overview.tsx';
import { Playground } from './Playground.tsx';
import { Usage } from './Usage.tsx';
import { Wallet } from './Wallet.tsx';

/** `account`: signed in with an API key or a wallet; `operator`: an operator token; `any`: both. */
export type Audience = 'account' | 'operator' | 'any';

export interface PageRoute {
  readonly segment: string;
  readonly title: string;
  readonly audience: Audience;
  readonly component: ComponentType;
}

export const ROUTES: readonly PageRoute[] = [
  { segment: 'overview', title: 'Overview', audience: 'account', component: Overview },
  { segment: 'keys', title: 'Keys', audience: 'account', component: Keys },
  { segment: 'usage', title: 'Usage', audience: 'account', component: Usage },
  { segment: 'models', title: 'Models', audience: 'any', component: Models },
  { segment: 'jobs', title: 'Jobs', audience: 'account', component: Jobs },
  { segment: 'playground', title: 'Playground', audience: 'account', component: Playground },
  { segment: 'wallet', title: 'Wallet', audience: 'account', component: Wallet },
  { segment: 'operator', title: 'Operator', audience: 'operator', component: Operator },
];

export function routesFor(kind: 'key' | 'operator' | 'wallet'): readonly PageRoute[] {
  const audience = kind === 'operator' ? 'operator' : 'account';
  return ROUTES.filter((route) => route.audience === 'any' || route.audience === audience);
}
