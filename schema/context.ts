import type { AuthContext } from '../src/auth/auth-context.ts';
import type { Operations } from '../src/services.ts';

/** New for every request (dataloader caches live on it). */
export interface GraphQLContext {
  readonly auth: AuthContext;
  readonly services: Operations;
  readonly requestId: string;
  /** Aborts when the client goes away (the connection closes before the answer is sent). */
  readonly signal: AbortSignal;
  /** The HTTP request (its Host and X-Forwarded-Proto give media URLs their origin: schema/types/media.ts). */
  readonly request?: Request;
}
