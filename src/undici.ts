import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

let loaded: typeof Undici | undefined;

/**
 * undici, Lagoon's HTTP client for upstreams, pages and webhooks, loaded on first use: its ~100 CommonJS files
 * cost about 0.1 s to load, which a start (and a server whose engines are all local) does without.
 */
export const undici = (): typeof Undici => (loaded ??= require('undici') as typeof Undici);

/** An undici Agent made on its first request (undici loads then, not at start); closing one never made is a no-op. */
export function agentOnFirstUse(options: () => Undici.Agent.Options): {
  get(): Undici.Agent;
  close(): Promise<void>;
} {
  let agent: Undici.Agent | undefined;
  return {
    get: () => (agent ??= new (undici().Agent)(options())),
    close: () => agent?.close() ?? Promise.resolve(),
  };
}
