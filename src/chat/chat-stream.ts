import type { AccountAuthContext } from '../auth/auth-context.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import type { PaidCall } from '../billing/paid-call.ts';
import type { CatalogModel } from '../catalog/model.ts';
import { AppError, ServerShuttingDownError, UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type {
  UpstreamChatChunk,
  UpstreamChatStream,
  UpstreamToolCallDelta,
  UpstreamUsage,
} from '../providers/chat/chat-engine.ts';
import type { UpstreamBody } from './chat-upstream.ts';
import { settleChat, type BilledTokens } from './chat-pricing.ts';
import type { EffectiveSettings } from './chat-request.ts';
import type { ChatChunkChoice, ChatCompletionChunk, ChatUsage, WebCitation } from './chat.types.ts';
import type { StreamOutputLimit } from './output-limit.ts';
import { countOutputTokens, countPromptTokens } from './token-count.ts';
import type { Admission } from '../rate-limits/rate-limiter.ts';

/** What a stream yields: chunks (the citations chunk and the final usage chunk included), or a last error. */
export type ChatStreamEvent =
  | { readonly type: 'chunk'; readonly chunk: ChatCompletionChunk }
  | { readonly type: 'error'; readonly error: AppError };

export interface ChatStreamContext {
  readonly auth: AccountAuthContext;
  readonly model: CatalogModel;
  readonly settings: EffectiveSettings;
  readonly citations: readonly WebCitation[];
  readonly searched: boolean;
  /** File parts whose text was extracted (each priced as a text parser request). */
  readonly files: number;
  readonly body: UpstreamBody;
  /** The call's hold, owned by the session from its start: settled or released once, however the stream ends. */
  readonly call: PaidCall;
  /** max_completion_tokens, held even when the upstream ignores it. */
  readonly outputLimit: StreamOutputLimit;
  readonly upstream: UpstreamChatStream;
  /** The provider whose stream this is (the metrics' and the log line's upstream). */
  readonly providerId: string;
  readonly controller: AbortController;
  readonly id: string;
  readonly created: number;
  readonly startedAt: number;
  /** The stream ends (finish_reason "length") once it has run this long. */
  readonly maxDurationMs: number;
  readonly logger: Logger;
  /** The rate-limit windows the call was admitted in; the completion's tokens are counted there at the end. */
  readonly admission?: Admission | undefined;
  /** Hears that the stream is settled (the service's list of open streams). */
  readonly onSettled?: (() => void) | undefined;
}

type Ending = 'complete' | 'limit' | 'upstream-failed' | 'client-gone' | 'max-duration' | 'shutdown';

const END: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

const NOTES: Record<Ending, string> = {
  complete: 'Chat completion (streamed)',
  limit: 'Chat completion (streamed); the upstream went past max_completion_tokens: cut off at the limit',
  'upstream-failed': 'Chat completion (streamed); the upstream failed mid-stream: charged for the tokens received',
  'client-gone': 'Chat completion (streamed); the client disconnected: charged for the tokens received',
  'max-duration': 'Chat completion (streamed); ended at the maximum stream duration: charged for the tokens delivered',
  shutdown: 'Chat completion (streamed); ended by a server shutdown: charged for the tokens delivered',
};

export const toUsage = (tokens: BilledTokens): ChatUsage => ({
  prompt_tokens: tokens.promptTokens,
  completion_tokens: tokens.completionTokens,
  total_tokens: tokens.promptTokens + tokens.completionTokens,
  prompt_tokens_details: { cached_tokens: Math.min(tokens.cachedTokens, tokens.promptTokens) },
  completion_tokens_details: null,
});

export const DOCUMENTS_TOOL = 'web_search_documents';

/**
 * What the call was charged, beside its usage chunk: the GraphQL chunk shows it (`charged`, `currency`); the REST
 * stream sends the chunk as the original service does, without it.
 */
const chunkCharges = new WeakMap<ChatCompletionChunk, SettledCharge>();
export const chargeOfChunk = (chunk: ChatCompletionChunk): SettledCharge | undefined => chunkCharges.get(chunk);

/** Whether a call has sources to show (citations chunk, documents tool call): it searched, or it read linked pages. */
export const hasSources = (call: { readonly searched: boolean; readonly citations: readonly WebCitation[] }): boolean =>
  call.searched || call.citations.length > 0;

/**
 * One streaming completion, from the started upstream stream to its settlement. Chunks are forwarded as they
 * arrive (rewritten to this service's id and model; reasoning dropped under strip_thinking_response). Endings:
 * - the upstream finished: settled on its usage (or a tokenizer count), then the usage chunk;
 * - every choice reached max_completion_tokens (an upstream that ignores it): the upstream request is aborted,
 *   settled on the limit, then the usage chunk;
 * - the upstream failed, or the client went away (cancel): charged for the tokens received so far, or nothing
 *   when none arrived; a failure is the last event;
 * - the stream reached its maximum duration: the upstream is cancelled, each choice finishes with "length" and the
 *   call is charged for the tokens delivered, then the usage chunk;
 * - the server shuts down (`shutDown`): the upstream is cancelled, the call is charged for the tokens delivered and
 *   the last event is a SERVER_SHUTTING_DOWN error.
 * While it runs, its hold is kept from timing out (a stream may outlive the reservation timeout).
 * Settlement happens once, whichever way the stream ends; read it once.
 */
export class ChatStreamSession implements AsyncIterable<ChatStreamEvent> {
  private started = false;
  private cancelled = false;
  private settled: Promise<ChatUsage | undefined> | undefined;
  private upstreamUsage: UpstreamUsage | undefined;
  private charge: SettledCharge | undefined;
  /** Text received per choice (content, reasoning, tool calls), for counting when no usage arrives. */
  private readonly received = new Map<number, string[]>();
  /** Highest tool call index per choice (the documents tool call goes after the model's). */
  private readonly toolCalls = new Map<number, number>();
  private timedOut = false;
  private shuttingDown = false;
  private readonly deadline: NodeJS.Timeout;

  constructor(private readonly ctx: ChatStreamContext) {
    ctx.call.keepAlive(); // ends with the call's settlement or release
    this.deadline = setTimeout(() => this.reachMaxDuration(), ctx.maxDurationMs);
    this.deadline.unref();
    // The caller went away (the REST request's signal, linked to this controller by the service).
    if (ctx.controller.signal.aborted) void this.cancel();
    else ctx.controller.signal.addEventListener('abort', () => void this.cancel(), { once: true });
  }

  /** Stops the stream (the client went away): aborts the upstream request and settles what was received. */
  cancel(): Promise<unknown> {
    if (!this.cancelled) {
      this.cancelled = true;
      this.ctx.controller.abort();
      this.ctx.upstream.cancel();
    }
    return this.finish('client-gone');
  }

  /**
   * Server shutdown: cancels the upstream and settles what was delivered now (a reader blocked on a slow client may
   * never come back); the reader gets the error last. A stream already settled is left as it is.
   */
  shutDown(): Promise<unknown> {
    if (!this.settled) {
      this.shuttingDown = true;
      this.ctx.upstream.cancel();
    }
    return this.finish('shutdown');
  }

  /** Ends the stream at its maximum duration; settled here too, in case nobody reads it any more. */
  private reachMaxDuration(): void {
    if (this.settled) return;
    this.timedOut = true;
    this.ctx.upstream.cancel();
    void this.finish('max-duration');
  }

  /**
   * The events in order: the citations chunk (when asked), the forwarded chunks, then after the upstream's end the
   * documents chunk and the usage chunk, or the error. An iterator object rather than an async generator: each
   * forwarded chunk is one `next()`, with no generator state per stream.
   */
  [Symbol.asyncIterator](): AsyncIterator<ChatStreamEvent, undefined> {
    if (this.started) throw new Error('A chat stream can be read only once');
    this.started = true;
    const upstream = this.ctx.upstream[Symbol.asyncIterator]();
    let phase: 'intro' | 'upstream' | 'tail' | 'done' = 'intro';
    const tail: ChatStreamEvent[] = [];
    const event = (value: ChatStreamEvent): IteratorResult<ChatStreamEvent, undefined> => ({ done: false, value });
    return {
      next: async () => {
        if (phase === 'intro') {
          phase = 'upstream';
          if (hasSources(this.ctx) && this.ctx.settings.include_search_results_in_stream) {
            return event({
              type: 'chunk',
              chunk: this.chunk([], { service_parameters: { web_search_citations: this.ctx.citations } }),
            });
          }
        }
        if (phase === 'upstream') {
          const chunk = await this.nextForwarded(upstream, tail);
          if (chunk) return event({ type: 'chunk', chunk });
          phase = 'tail';
        }
        const next = tail.shift();
        if (next) return event(next);
        phase = 'done';
        return END;
      },
      // A consumer that stops early is a client that went away.
      return: async () => {
        const reading = phase === 'intro' || phase === 'upstream';
        phase = 'done';
        await this.cancel();
        if (reading) await upstream.return?.().catch(() => undefined);
        return END;
      },
    };
  }

  /**
   * The next chunk to forward; undefined once the upstream's part is over, with what follows it (documents, usage,
   * or the error) put in `tail` and the call settled.
   */
  private async nextForwarded(
    upstream: AsyncIterator<UpstreamChatChunk>,
    tail: ChatStreamEvent[],
  ): Promise<ChatCompletionChunk | undefined> {
    let ending: Ending;
    let failure: AppError | undefined;
    for (;;) {
      const stopped = this.stoppedBy();
      if (stopped) {
        ending = stopped;
        await upstream.return?.().catch(() => undefined);
        break;
      }
      if (this.ctx.outputLimit.reached) {
        ending = 'limit';
        this.ctx.upstream.cancel();
        await upstream.return?.().catch(() => undefined);
        break;
      }
      let read: IteratorResult<UpstreamChatChunk>;
      try {
        read = await upstream.next();
      } catch (error) {
        ending = this.stoppedBy() ?? 'upstream-failed';
        failure = asAppError(error);
        if (ending === 'upstream-failed')
          this.ctx.logger.warn(
            { reqId: this.ctx.auth.requestId, model: this.ctx.model.id, err: error },
            'chat stream failed mid-stream',
          );
        break;
      }
      const stoppedNow = this.stoppedBy();
      if (read.done || stoppedNow) {
        // A chunk read as the stream was stopped is not forwarded: the settlement has counted what was.
        ending = stoppedNow ?? 'complete';
        break;
      }
      if (read.value.usage) this.upstreamUsage = read.value.usage;
      const chunk = this.forward(read.value);
      if (chunk) return chunk;
    }
    if (ending === 'complete' || ending === 'limit' || ending === 'max-duration') {
      if (ending === 'max-duration')
        tail.push({
          type: 'chunk',
          chunk: this.chunk(
            this.choiceIndexes().map((index) => ({ index, delta: {}, finish_reason: 'length', logprobs: null })),
          ),
        });
      tail.push(...this.documentChunks());
      const usage = await this.finish(ending);
      if (usage) {
        const chunk = this.chunk([], { usage });
        if (this.charge) chunkCharges.set(chunk, this.charge);
        tail.push({ type: 'chunk', chunk });
      }
      return undefined;
    }
    await this.finish(ending);
    if (ending === 'upstream-failed' && failure) tail.push({ type: 'error', error: failure });
    if (ending === 'shutdown') tail.push({ type: 'error', error: new ServerShuttingDownError() });
    return undefined;
  }

  /** Why the stream was stopped from outside, if it was; a shutdown wins (the client is cut after it). */
  private stoppedBy(): 'shutdown' | 'client-gone' | 'max-duration' | undefined {
    if (this.shuttingDown) return 'shutdown';
    if (this.cancelled) return 'client-gone';
    return this.timedOut ? 'max-duration' : undefined;
  }

  private chunk(choices: readonly ChatChunkChoice[], extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk {
    return {
      id: this.ctx.id,
      object: 'chat.completion.chunk',
      created: this.ctx.created,
      model: this.ctx.model.id,
      choices,
      ...extra,
    };
  }

  private forward(upstreamChunk: UpstreamChatChunk): ChatCompletionChunk | undefined {
    if (upstreamChunk.choices.length === 0) return undefined;
    const strip = this.ctx.settings.strip_thinking_response;
    const choices: ChatChunkChoice[] = [];
    for (const upstreamChoice of upstreamChunk.choices) {
      const choice = this.ctx.outputLimit.apply(upstreamChoice);
      if (!choice) continue;
      const { delta } = choice;
      this.record(choice.index, delta.content, delta.reasoning_content, delta.tool_calls);
      let out = delta;
      if (strip && delta.reasoning_content !== undefined) {
        const { reasoning_content: _dropped, ...rest } = delta;
        if (Object.keys(rest).length === 0 && choice.finish_reason === null) continue;
        out = rest;
      }
      choices.push({
        index: choice.index,
        delta: out,
        finish_reason: choice.finish_reason,
        ...(choice.stop_reason !== undefined && { stop_reason: choice.stop_reason }),
        logprobs: choice.logprobs ?? null,
      });
    }
    return choices.length > 0 ? this.chunk(choices) : undefined;
  }

  private record(
    index: number,
    content: string | undefined,
    reasoning: string | undefined,
    calls: readonly UpstreamToolCallDelta[] | undefined,
  ): void {
    let pieces = this.received.get(index);
    if (!pieces) this.received.set(index, (pieces = []));
    if (content) pieces.push(content);
    if (reasoning) pieces.push(reasoning);
    for (const call of calls ?? []) {
      if (call.function?.name) pieces.push(call.function.name);
      if (call.function?.arguments) pieces.push(call.function.arguments);
      this.toolCalls.set(index, Math.max(this.toolCalls.get(index) ?? -1, call.index));
    }
  }

  /** return_search_results_as_documents: the search results as one more tool call per choice. */
  private *documentChunks(): Generator<ChatStreamEvent> {
    if (!hasSources(this.ctx) || !this.ctx.settings.return_search_results_as_documents) return;
    const args = JSON.stringify({ documents: this.ctx.citations });
    const choices = [...this.received.keys()].map((index): ChatChunkChoice => ({
      index,
      delta: {
        tool_calls: [
          {
            index: (this.toolCalls.get(index) ?? -1) + 1,
            id: DOCUMENTS_TOOL,
            type: 'function',
            function: { name: DOCUMENTS_TOOL, arguments: args },
          },
        ],
      },
      finish_reason: null,
    }));
    if (choices.length > 0) yield { type: 'chunk', chunk: this.chunk(choices) };
  }

  /** The choices seen so far (the first one when none was). */
  private choiceIndexes(): number[] {
    return this.received.size > 0 ? [...this.received.keys()] : [0];
  }

  private finish(ending: Ending): Promise<ChatUsage | undefined> {
    // Whatever the ending, the hold is not left behind: released unless the settlement charged it.
    return (this.settled ??= this.settle(ending).finally(async () => {
      await this.ctx.call.release();
      this.ctx.onSettled?.();
    }));
  }

  private async settle(ending: Ending): Promise<ChatUsage | undefined> {
    const { ctx } = this;
    clearTimeout(this.deadline);
    const received = [...this.received.values()].map((pieces) => pieces.join(''));
    // Upstream error before output, or a client gone before any: nothing was delivered, nothing is charged.
    if (ending !== 'complete' && received.every((text) => text === '')) return undefined;
    const reported = ending === 'complete' ? this.upstreamUsage : undefined;
    const tokens: BilledTokens = reported
      ? {
          promptTokens: reported.prompt_tokens,
          cachedTokens: reported.cached_tokens,
          completionTokens: ctx.outputLimit.billable(reported.completion_tokens),
        }
      : {
          promptTokens: this.upstreamUsage?.prompt_tokens ?? (await countPromptTokens(ctx.body)),
          cachedTokens: this.upstreamUsage?.cached_tokens ?? 0,
          completionTokens: ctx.outputLimit.billable(await countOutputTokens(received)),
        };
    try {
      this.charge = await settleChat(ctx.call, ctx, tokens, { notes: NOTES[ending], logger: ctx.logger });
    } catch (error) {
      ctx.logger.error(
        { err: error, reservationId: ctx.call.reservation.id },
        'settling a chat stream failed; its hold was released',
      );
    }
    return toUsage(tokens);
  }
}

function asAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  return new UpstreamError('The upstream model failed while streaming', 'INFERENCE_FAILED');
}
