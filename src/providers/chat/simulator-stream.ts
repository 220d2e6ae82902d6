import { setTimeout as sleep } from 'node:timers/promises';
import { decodeTokens, encodeText } from '../../tokenizer.ts';
import type { JsonObject, UpstreamChatChunk, UpstreamChatStream, UpstreamChunkChoice } from './chat-engine.ts';
import type { Plan } from './simulator-plan.ts';
import type { Rng } from './simulator-text.ts';
import { cancelledError } from '../upstream-errors.ts';

/* The simulator's reply as a stream: a few tokens per chunk with a pause between chunks, and synthetic logprobs. */

export class SimulatedStream implements UpstreamChatStream {
  private readonly controller = new AbortController();

  constructor(
    private readonly chunks: readonly UpstreamChatChunk[],
    private readonly delayMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {}

  cancel(): void {
    this.controller.abort();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<UpstreamChatChunk, void, undefined> {
    const signal = this.callerSignal
      ? AbortSignal.any([this.callerSignal, this.controller.signal])
      : this.controller.signal;
    for (const [index, chunk] of this.chunks.entries()) {
      if (index > 0 && this.delayMs > 0) await sleep(this.delayMs, undefined, { signal }).catch(() => undefined);
      if (this.callerSignal?.aborted) throw cancelledError();
      if (this.controller.signal.aborted) return;
      yield chunk;
    }
  }
}

const ALTERNATIVES = [' the', ' a', ' and', ' to', ' of', '.', ','];

/** OpenAI's `logprobs.content`: one entry per token, synthetic but well-formed. */
export function logprobsFor(tokens: readonly number[], top: number): JsonObject {
  return {
    content: tokens.map((token, position) => {
      const text = decodeTokens([token]);
      const logprob = -Number((((position * 7919) % 1000) / 1000).toFixed(4));
      return {
        token: text,
        logprob,
        bytes: [...Buffer.from(text, 'utf8')],
        top_logprobs: [text, ...ALTERNATIVES.filter((alt) => alt !== text)].slice(0, top).map((alt, rank) => ({
          token: alt,
          logprob: rank === 0 ? logprob : logprob - rank,
          bytes: [...Buffer.from(alt, 'utf8')],
        })),
      };
    }),
  };
}

/** Splits text into pieces of 1–4 tokens; a piece never ends inside a multi-byte character. */
function tokenPieces(text: string, rng: Rng): { text: string; tokens: number[] }[] {
  const tokens = encodeText(text);
  const pieces: { text: string; tokens: number[] }[] = [];
  let emitted = '';
  let start = 0;
  let end = 0;
  while (end < tokens.length) {
    end = Math.min(tokens.length, end + rng.int(1, 4));
    const decoded = decodeTokens(tokens.slice(0, end));
    if (end < tokens.length && decoded.endsWith('\uFFFD')) continue;
    pieces.push({ text: decoded.slice(emitted.length), tokens: tokens.slice(start, end) });
    emitted = decoded;
    start = end;
  }
  return pieces;
}

export function streamChunks(plan: Plan, rng: Rng): UpstreamChatChunk[] {
  const chunks: UpstreamChatChunk[] = [];
  const push = (choice: UpstreamChunkChoice) => chunks.push({ id: plan.id, created: plan.created, choices: [choice] });
  plan.choices.forEach((choice, index) => {
    push({ index, delta: { role: 'assistant', content: '' }, finish_reason: null });
    for (const piece of choice.reasoning ? tokenPieces(choice.reasoning, rng) : []) {
      push({ index, delta: { reasoning_content: piece.text }, finish_reason: null });
    }
    for (const piece of choice.content ? tokenPieces(choice.content, rng) : []) {
      push({
        index,
        delta: { content: piece.text },
        finish_reason: null,
        ...(plan.logprobs ? { logprobs: logprobsFor(piece.tokens, plan.logprobs.top) } : {}),
      });
    }
    choice.toolCalls.forEach((call, callIndex) => {
      push({
        index,
        delta: {
          tool_calls: [
            { index: callIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
          ],
        },
        finish_reason: null,
      });
      for (const piece of tokenPieces(call.function.arguments, rng)) {
        push({
          index,
          delta: { tool_calls: [{ index: callIndex, function: { arguments: piece.text } }] },
          finish_reason: null,
        });
      }
    });
    push({ index, delta: {}, finish_reason: choice.finishReason, stop_reason: choice.stopReason });
  });
  chunks.push({ id: plan.id, created: plan.created, choices: [], usage: plan.usage });
  return chunks;
}
