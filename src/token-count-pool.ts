import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { TOKEN_WORKER } from './runtime-files.ts';
import { countTextTokens, TokenCounter } from './tokenizer.ts';
import type { TokenCountReply, TokenCountRequest } from './token-worker.ts';

/*
 * Token counts of request-sized texts without holding the event loop. Short texts (most chat messages) are counted
 * in place: it takes well under a millisecond. Longer ones go to one worker thread, so the event loop stays free
 * (a 900 KB message takes about a second of CPU) and, on a busy machine, the main thread is idle rather than
 * runnable when a request arrives, so the kernel schedules it at once. The thread starts on the first long count
 * and stays (its own copy of the vocabulary, ~40 MB); it keeps the process alive only while it counts. Should it
 * fail, counting goes on in place in slices (TokenCounter).
 */

/** Up to this many characters in all, a count is done in place (a few milliseconds at worst). */
const IN_PLACE_CHARS = 8_192;

interface Pending {
  resolve(tokens: number): void;
  reject(error: Error): void;
}

class TokenCountThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  dead = false;

  constructor() {
    this.worker = startWorker();
    this.worker.unref();
    this.worker.on('message', (reply: TokenCountReply) => {
      const job = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      job?.resolve(reply.tokens);
    });
    const fail = (error: Error) => {
      this.dead = true;
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`token count thread exited (${code})`)));
  }

  count(texts: readonly string[]): Promise<number> {
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, texts } satisfies TokenCountRequest);
    });
  }
}

/** Built, the worker is plain JavaScript; from the sources it is TypeScript, with tsx registered in the thread. */
function startWorker(): Worker {
  if (!TOKEN_WORKER.typescript) return new Worker(TOKEN_WORKER.url, { execArgv: [] });
  const tsxApi = new URL('index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api'))).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(TOKEN_WORKER.url.href)}); });`;
  return new Worker(bootstrap, { eval: true, execArgv: [] });
}

let thread: TokenCountThread | undefined;

/** The tokens of all `texts` together, counted off the event loop when they are long. */
export async function countTexts(texts: readonly string[]): Promise<number> {
  let chars = 0;
  for (const text of texts) chars += text.length;
  if (chars <= IN_PLACE_CHARS) return texts.reduce((sum, text) => sum + countTextTokens(text), 0);
  if (thread?.dead) thread = undefined;
  try {
    return await (thread ??= new TokenCountThread()).count(texts);
  } catch {
    const counter = new TokenCounter();
    let tokens = 0;
    for (const text of texts) tokens += await counter.count(text);
    return tokens;
  }
}
