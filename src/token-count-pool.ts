import { TOKEN_WORKER } from './runtime-files.ts';
import { countTextTokens, TokenCounter } from './tokenizer.ts';
import { CallThread } from './worker-thread.ts';

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

let thread: CallThread<readonly string[], number> | undefined;

/** The tokens of all `texts` together, counted off the event loop when they are long. */
export async function countTexts(texts: readonly string[]): Promise<number> {
  let chars = 0;
  for (const text of texts) chars += text.length;
  if (chars <= IN_PLACE_CHARS) return texts.reduce((sum, text) => sum + countTextTokens(text), 0);
  if (thread?.dead) thread = undefined;
  try {
    return await (thread ??= new CallThread('token count', TOKEN_WORKER)).call(texts);
  } catch {
    const counter = new TokenCounter();
    let tokens = 0;
    for (const text of texts) tokens += await counter.count(text);
    return tokens;
  }
}
