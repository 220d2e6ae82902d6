/*
 * The console's credential: one bearer token for /graphql and /graphql/stream, kept in sessionStorage (this tab
 * only; closing the tab signs out). Whatever made it — an API key pasted on the sign-in page, an operator token,
 * a wallet sign-in — stores it here with signIn(); everything else reads it through useCredential().
 */
import { useEffect, useState } from 'preact/hooks';

/** How the bearer was obtained; `operator` unlocks the operator view's nav entry. */
export type CredentialKind = 'key' | 'operator' | 'wallet';

export interface Credential {
  readonly bearer: string;
  readonly kind: CredentialKind;
  /** What the shell shows as "signed in as" (account name, wallet address, token name). */
  readonly label: string;
}

const STORAGE_KEY = 'lagoon.credential';
const listeners = new Set<(credential: Credential | undefined) => void>();

/** Operator tokens are minted by the CLI (`lagoon operator-tokens create`) with this prefix. */
export const OPERATOR_PREFIX = 'lagoonop_';

export function kindOfSecret(secret: string): CredentialKind {
  return secret.startsWith(OPERATOR_PREFIX) ? 'operator' : 'key';
}

export function currentCredential(): Credential | undefined {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<Credential>;
    if (typeof value.bearer !== 'string' || typeof value.label !== 'string') return undefined;
    const kind = value.kind === 'operator' || value.kind === 'wallet' ? value.kind : 'key';
    return { bearer: value.bearer, kind, label: value.label };
  } catch {
    return undefined;
  }
}

export function signIn(credential: Credential): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  for (const listener of listeners) listener(credential);
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener(undefined);
}

/**
 * The header carrying the current credential (none when signed out): a wallet's sign-in travels in SIGN-IN-WITH-X
 * (docs/api.md, "Wallet callers"), every other credential as `Authorization: Bearer`.
 */
export function authHeaders(): Record<string, string> {
  const credential = currentCredential();
  if (!credential) return {};
  return credential.kind === 'wallet'
    ? { 'sign-in-with-x': credential.bearer }
    : { authorization: `Bearer ${credential.bearer}` };
}

export function useCredential(): Credential | undefined {
  const [credential, setCredential] = useState(currentCredential);
  useEffect(() => {
    listeners.add(setCredential);
    return () => void listeners.delete(setCredential);
  }, []);
  return credential;
}
