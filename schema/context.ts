import type { AuthContext } from '../src/auth/auth-context.ts';
import type { Services } from '../src/services.ts';

/** New for every request (dataloader caches live on it). */
export interface GraphQLContext {
  readonly auth: AuthContext;
  readonly services: Services;
  readonly requestId: string;
}
