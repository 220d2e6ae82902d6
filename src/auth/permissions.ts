import { AdminKeyRequiredError, AuthenticationError, ForbiddenError } from '../errors.ts';
import type { AccountAuthContext, AuthContext, KeyAuthContext, WalletAuthContext } from './auth-context.ts';

const AUTH_REQUIRED = 'Authentication required: send Authorization: Bearer <API key> or a SIGN-IN-WITH-X header';

/** Any caller that can use inference routes: an ADMIN or INFERENCE key, or a signed-in wallet. */
export function requireAccount(auth: AuthContext): AccountAuthContext {
  if (auth.kind !== 'apiKey' && auth.kind !== 'wallet') throw new AuthenticationError(AUTH_REQUIRED);
  return auth;
}

/** An API key of either type (account administration a wallet has no part in). */
export function requireKey(auth: AuthContext): KeyAuthContext {
  if (auth.kind !== 'apiKey')
    throw new AuthenticationError('Authentication required: send Authorization: Bearer <API key>');
  return auth;
}

/** ADMIN keys only (/api_keys* and /billing/*; see docs/api.md); a wallet gets 401 as if it had no key. */
export function requireAdmin(auth: AuthContext): KeyAuthContext {
  const account = requireKey(auth);
  if (account.apiKey.type !== 'ADMIN') throw new AdminKeyRequiredError();
  return account;
}

/** A signed-in wallet only (the x402 balance and ledger). */
export function requireWallet(auth: AuthContext): WalletAuthContext {
  if (auth.kind !== 'wallet') throw new AuthenticationError('Wallet sign-in required: send a SIGN-IN-WITH-X header');
  return auth;
}

export function requireOperator(auth: AuthContext): void {
  if (auth.kind !== 'operator') throw new ForbiddenError('Operator access required');
}
