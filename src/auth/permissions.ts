import { AdminKeyRequiredError, AuthenticationError, ForbiddenError } from '../errors.ts';
import type { AccountAuthContext, AuthContext } from './auth-context.ts';

/** Any account credential (ADMIN or INFERENCE key). */
export function requireAccount(auth: AuthContext): AccountAuthContext {
  if (auth.kind !== 'apiKey')
    throw new AuthenticationError('Authentication required: send Authorization: Bearer <API key>');
  return auth;
}

/** ADMIN keys only (/api_keys* and /billing/*; see docs/api.md). */
export function requireAdmin(auth: AuthContext): AccountAuthContext {
  const account = requireAccount(auth);
  if (account.apiKey.type !== 'ADMIN') throw new AdminKeyRequiredError();
  return account;
}

export function requireOperator(auth: AuthContext): void {
  if (auth.kind !== 'operator') throw new ForbiddenError('Operator access required');
}
