import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

let loaded: typeof Undici | undefined;

/**
 * undici, Lagoon's HTTP client for upstreams, pages and webhooks, loaded on first use: its ~100 CommonJS files
 * cost about 0.1 s to load, which a start (and a server whose engines are all local) does without.
 */
export const undici = (): typeof Undici => (loaded ??= require('undici') as typeof Undici);
