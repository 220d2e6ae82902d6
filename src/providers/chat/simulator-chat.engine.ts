import { z } from 'zod';
import { encodeText } from '../../tokenizer.ts';
import type {
  ChatCallOptions,
  ChatEngine,
  UpstreamChatCompletion,
  UpstreamChatRequest,
  UpstreamChatStream,
} from './chat-engine.ts';
import { planReply } from './simulator-plan.ts';
import { logprobsFor, SimulatedStream, streamChunks } from './simulator-stream.ts';
import { Rng } from './simulator-text.ts';
import { cancelledError } from '../upstream-errors.ts';

/*
 * The built-in `simulator` provider: a DEVELOPMENT and TEST stand-in for a model server, not a model. Replies are
 * derived from a hash of the messages and `seed`, so the same request always gets the same answer. It honours
 * max_completion_tokens / max_tokens (o200k_base token counts), `stop`, `n`, forced tool calls (arguments valid
 * for the tool's parameters schema), `response_format` (JSON valid for the schema), `logprobs`, reasoning
 * (`options.reasoning`), and streams a few tokens per chunk with a small pause (`options.chunkDelayMs`).
 */

export const SimulatorOptions = z.strictObject({
  /** Pause between stream chunks (default 5 ms); 0 streams as fast as the reader reads. */
  chunkDelayMs: z.number().int().min(0).max(10_000).optional(),
});
export type SimulatorOptions = z.output<typeof SimulatorOptions>;

const DEFAULT_CHUNK_DELAY_MS = 5;

export class SimulatorChatEngine implements ChatEngine {
  readonly type = 'simulator' as const;
  private readonly chunkDelayMs: number;

  constructor(
    readonly id: string,
    options: SimulatorOptions = {},
  ) {
    this.chunkDelayMs = options.chunkDelayMs ?? DEFAULT_CHUNK_DELAY_MS;
  }

  async complete(request: UpstreamChatRequest, options: ChatCallOptions): Promise<UpstreamChatCompletion> {
    if (options.signal?.aborted) throw cancelledError();
    const plan = await planReply(request, options);
    return {
      id: plan.id,
      created: plan.created,
      choices: plan.choices.map((choice, index) => ({
        index,
        message: {
          role: 'assistant',
          content: choice.content,
          reasoning_content: choice.reasoning,
          tool_calls: choice.toolCalls,
        },
        finish_reason: choice.finishReason,
        stop_reason: choice.stopReason,
        logprobs: plan.logprobs && choice.content ? logprobsFor(encodeText(choice.content), plan.logprobs.top) : null,
      })),
      usage: plan.usage,
    };
  }

  async stream(request: UpstreamChatRequest, options: ChatCallOptions): Promise<UpstreamChatStream> {
    if (options.signal?.aborted) throw cancelledError();
    const plan = await planReply(request, options);
    return new SimulatedStream(streamChunks(plan, Rng.from(plan.id, 7)), this.chunkDelayMs, options.signal);
  }
}
