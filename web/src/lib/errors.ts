/*
 * The API's errors in words. Two kinds reach a page: typed errors (a result union's `... on Error { code message }`
 * member, the API's expected failures) and request errors (urql's CombinedError: network down, key refused,
 * a GraphQL error). Every page shows both through <ErrorNotice> (web/src/components/ErrorNotice.tsx).
 */
import type { CombinedError } from '@urql/core';

/** A typed error as selected by `... on Error { code message }`. */
export interface TypedError {
  readonly __typename?: string;
  readonly code: string;
  readonly message: string;
}

/** What to do about each code, added after the API's own message. */
const ADVICE: Record<string, string> = {
  ADMIN_KEY_REQUIRED: 'This needs an ADMIN key: sign in with one.',
  UNAUTHORIZED: 'This credential may not do that.',
  AUTHENTICATION_FAILED: 'The credential was refused (revoked, expired or mistyped): sign in again.',
  INSUFFICIENT_BALANCE: 'The balance is too low: top up, then try again.',
  RATE_LIMIT_EXCEEDED: 'Too many requests for this key: wait a moment and try again.',
  API_KEY_USD_SPEND_LIMIT_EXCEEDED: "The key's USD spend limit is reached: raise it on the Keys page.",
  API_KEY_DIEM_SPEND_LIMIT_EXCEEDED: "The key's DIEM spend limit is reached: raise it on the Keys page.",
  INVALID_REQUEST: 'Check the values entered.',
  INVALID_MODEL: 'Pick a model from the Models page.',
  NOT_FOUND: 'It no longer exists (deleted or revoked).',
  CONFLICT: 'It changed meanwhile: reload and try again.',
  UPSTREAM_ERROR: 'The model provider failed: try again later.',
  MODEL_OFFLINE: 'The model is offline: pick another.',
  SERVICE_UNAVAILABLE: 'Lagoon is busy: try again shortly.',
};

export function describeTypedError(error: TypedError): string {
  const advice = ADVICE[error.code];
  return advice ? `${error.message} ${advice}` : error.message;
}

/** A member of a result union: the typed error when it is one. */
export function typedErrorOf(result: { __typename?: string } | null | undefined): TypedError | undefined {
  if (result && 'code' in result && 'message' in result) {
    const { code, message } = result as { code: unknown; message: unknown };
    if (typeof code === 'string' && typeof message === 'string') return { code, message };
  }
  return undefined;
}

/** True when the server refused the credential itself (the console then asks to sign in again). */
export function isUnauthenticated(error: CombinedError): boolean {
  const status = (error.response as { status?: number } | undefined)?.status;
  return status === 401 || error.graphQLErrors.some((e) => e.extensions.code === 'AUTHENTICATION_FAILED');
}

export function describeRequestError(error: CombinedError): string {
  if (isUnauthenticated(error)) return ADVICE.AUTHENTICATION_FAILED!;
  if (error.networkError) return `Lagoon could not be reached (${error.networkError.message}).`;
  const first = error.graphQLErrors[0];
  if (!first) return error.message;
  const code = typeof first.extensions.code === 'string' ? first.extensions.code : undefined;
  return describeTypedError({ code: code ?? '', message: first.message });
}
