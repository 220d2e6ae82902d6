import { parentPort } from 'node:worker_threads';
import { countTextTokens } from './tokenizer.ts';

/** The token counting thread (src/token-count-pool.ts): counts the texts of one request, replies with their sum. */
if (!parentPort) throw new Error('token-worker.ts runs only as a worker thread');
const port = parentPort;

export interface TokenCountRequest {
  readonly id: number;
  readonly texts: readonly string[];
}
export interface TokenCountReply {
  readonly id: number;
  readonly tokens: number;
}

port.on('message', (request: TokenCountRequest) => {
  let tokens = 0;
  for (const text of request.texts) tokens += countTextTokens(text);
  port.postMessage({ id: request.id, tokens } satisfies TokenCountReply);
});
