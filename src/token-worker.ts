import { countTextTokens } from './tokenizer.ts';
import { serveCalls } from './worker-thread.ts';

/** The token counting thread (src/token-count-pool.ts): counts the texts of one request, replies with their sum. */
serveCalls((texts: readonly string[]) => texts.reduce((sum, text) => sum + countTextTokens(text), 0));
