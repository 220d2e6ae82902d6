import type { AuthContext } from '../src/auth/auth-context.ts';
import type { Operations } from '../src/services.ts';

/** New for every request (dataloader caches live on it). */
export interface GraphQLContext {
  readonly auth: AuthContext;
  readonly services: Operations;
  readonly requestId: string;
  /** Aborts when the client goes away (the connection closes before the answer is sent). */
  readonly signal: AbortSignal;
  /**
   * The origin the client reached the API on (Host, X-Forwarded-Proto, else the request URL's), read once per request:
   * media URLs are built on it when LAGOON_PUBLIC_URL is not set.
   */
  readonly origin?: string | undefined;
}
