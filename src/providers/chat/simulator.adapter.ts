import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { clip, ValidationError } from '../../errors.ts';
import { countTexts } from '../../token-count-pool.ts';
import { decodeTokens, encodeText } from '../../tokenizer.ts';
import type {
  ChatCallOptions,
  ChatProvider,
  JsonObject,
  UpstreamChatChunk,
  UpstreamChatCompletion,
  UpstreamChatRequest,
  UpstreamChatStream,
  UpstreamChunkChoice,
  UpstreamToolCall,
  UpstreamUsage,
} from './chat-provider.ts';
import { valueForSchema } from './simulator-json.ts';
import { reasoningText, replyText, Rng, toolResultText, topicWords } from './simulator-text.ts';
import { cancelledError } from './upstream-errors.ts';

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
const MAX_CHOICES = 128;
const tokensOf = encodeText;

interface PlannedChoice {
  content: string | null;
  reasoning: string | null;
  toolCalls: UpstreamToolCall[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  stopReason: string | null;
}

interface Plan {
  id: string;
  created: number;
  choices: PlannedChoice[];
  usage: UpstreamUsage;
  logprobs: { top: number } | null;
}

export class SimulatorAdapter implements ChatProvider {
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
        logprobs: plan.logprobs && choice.content ? logprobsFor(tokensOf(choice.content), plan.logprobs.top) : null,
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

class SimulatedStream implements UpstreamChatStream {
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

/** The text of a message's content: a string, or the text parts of a content array. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && (part as { type?: unknown }).type === 'text'
        ? String((part as { text?: unknown }).text ?? '')
        : '',
    )
    .filter(Boolean)
    .join('\n');
}

/** Image parts count as a fixed 85 tokens, like OpenAI's low-detail images. */
function imagePartsOf(content: unknown): number {
  return Array.isArray(content)
    ? content.filter((part) => part && typeof part === 'object' && (part as { type?: unknown }).type === 'image_url')
        .length
    : 0;
}

/** Long prompts are counted off the event loop: the simulator runs in the server's process. */
async function promptTokens(request: UpstreamChatRequest): Promise<number> {
  let total = 3;
  const texts: string[] = [];
  for (const message of request.messages) {
    total += 4 + 85 * imagePartsOf(message.content);
    texts.push(textOf(message.content));
    if (Array.isArray(message.tool_calls)) texts.push(JSON.stringify(message.tool_calls));
  }
  if (Array.isArray(request.tools) && request.tools.length > 0) texts.push(JSON.stringify(request.tools));
  return total + (await countTexts(texts));
}

interface FunctionTool {
  name: string;
  parameters: unknown;
}

function functionTools(request: UpstreamChatRequest): FunctionTool[] {
  if (!Array.isArray(request.tools)) return [];
  return request.tools.flatMap((tool) => {
    const fn = (tool as { function?: { name?: unknown; parameters?: unknown } } | null)?.function;
    return fn && typeof fn.name === 'string'
      ? [{ name: fn.name, parameters: fn.parameters ?? { type: 'object', properties: {} } }]
      : [];
  });
}

/** Which tool to call: forced by tool_choice, or with `auto` when the user's message names a tool. */
function toolToCall(
  request: UpstreamChatRequest,
  tools: FunctionTool[],
  lastUserText: string,
  lastRole: unknown,
  rng: Rng,
): FunctionTool | undefined {
  if (tools.length === 0) return undefined;
  const choice = request.tool_choice;
  if (choice === 'none') return undefined;
  if (choice && typeof choice === 'object') {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool)
      throw new ValidationError(`tool_choice names the function "${clip(String(name))}", which is not in tools`);
    return tool;
  }
  if (choice === 'required') return rng.pick(tools);
  // auto: answer a tool result in text; call a tool the user's message mentions by name.
  if (lastRole === 'tool') return undefined;
  const said = lastUserText.toLowerCase();
  return tools.find(
    (tool) => said.includes(tool.name.toLowerCase()) || said.includes(tool.name.toLowerCase().replaceAll('_', ' ')),
  );
}

function responseSchema(
  request: UpstreamChatRequest,
): { kind: 'schema'; schema: unknown } | { kind: 'object' } | undefined {
  const format = request.response_format as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === 'json_schema')
    return { kind: 'schema', schema: format.json_schema?.schema ?? { type: 'object' } };
  if (format?.type === 'json_object') return { kind: 'object' };
  return undefined;
}

function stopStrings(request: UpstreamChatRequest): string[] {
  const stop = request.stop;
  if (typeof stop === 'string') return stop ? [stop] : [];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string' && s.length > 0) : [];
}

function maxTokensOf(request: UpstreamChatRequest): number | undefined {
  for (const value of [request.max_completion_tokens, request.max_tokens]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}

async function planReply(request: UpstreamChatRequest, options: ChatCallOptions): Promise<Plan> {
  const messages = request.messages;
  const last = messages.at(-1);
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const lastUserText = textOf(lastUser?.content);
  const seed = typeof request.seed === 'number' ? request.seed : null;
  const key = JSON.stringify({ messages, seed });
  const hash = createHash('sha256').update(key).digest('hex');
  const tools = functionTools(request);
  const format = responseSchema(request);
  const stops = stopStrings(request);
  const maxTokens = maxTokensOf(request);
  const n =
    typeof request.n === 'number' && Number.isInteger(request.n) && request.n > 1
      ? Math.min(request.n, MAX_CHOICES)
      : 1;
  const topic = topicWords(lastUserText);

  let completionTokens = 0;
  const choices = Array.from({ length: n }, (_, index): PlannedChoice => {
    const rng = Rng.from(key, index);
    let reasoning = options.reasoning ? reasoningText(rng, lastUserText) : null;
    const tool = toolToCall(request, tools, lastUserText, last?.role, rng);
    let content: string | null;
    let toolCalls: UpstreamToolCall[] = [];
    if (tool) {
      content = null;
      toolCalls = [
        {
          id: `call_${hash.slice(0, 12)}${index}`,
          type: 'function',
          function: { name: tool.name, arguments: JSON.stringify(valueForSchema(tool.parameters, rng, topic)) },
        },
      ];
    } else if (format?.kind === 'schema') {
      content = JSON.stringify(valueForSchema(format.schema, rng, topic));
    } else if (format?.kind === 'object') {
      content = JSON.stringify({ answer: replyText(rng, lastUserText, 15) });
    } else if (last?.role === 'tool') {
      const callId = last.tool_call_id;
      const caller = messages
        .flatMap((message) => (Array.isArray(message.tool_calls) ? (message.tool_calls as UpstreamToolCall[]) : []))
        .find((call) => call.id === callId);
      content = toolResultText(caller?.function?.name, textOf(last.content));
    } else {
      content = replyText(rng, lastUserText, rng.int(25, 70));
    }

    // Widened on purpose: `take` below may switch it to 'length'.
    let finishReason = (toolCalls.length > 0 ? 'tool_calls' : 'stop') as PlannedChoice['finishReason'];
    let stopReason: string | null = null;
    if (content !== null && stops.length > 0) {
      const cut = earliestStop(content, stops);
      if (cut) {
        content = content.slice(0, cut.index);
        stopReason = cut.stop;
      }
    }

    // max tokens covers reasoning first, then the answer (as OpenAI's max_completion_tokens does).
    let budget = maxTokens ?? Number.POSITIVE_INFINITY;
    const take = (text: string): string => {
      const tokens = tokensOf(text);
      if (tokens.length <= budget) {
        budget -= tokens.length;
        completionTokens += tokens.length;
        return text;
      }
      const kept = tokens.slice(0, budget);
      completionTokens += kept.length;
      budget = 0;
      finishReason = 'length';
      return decodeTokens(kept).replace(/\uFFFD+$/, '');
    };
    if (reasoning !== null) reasoning = take(reasoning);
    if (content !== null) content = finishReason === 'length' ? '' : take(content);
    if (toolCalls.length > 0) {
      const [call] = toolCalls as [UpstreamToolCall];
      const needed = tokensOf(call.function.name + call.function.arguments).length;
      completionTokens += Math.min(needed, budget);
      if (finishReason === 'length' || needed > budget) {
        // Cut off mid-call: no usable call, only "length".
        toolCalls = [];
        content = '';
        finishReason = 'length';
      }
      budget = Math.max(0, budget - needed);
    }
    if (finishReason === 'length') stopReason = null;
    return { content, reasoning, toolCalls, finishReason, stopReason };
  });

  const prompt = await promptTokens(request);
  const logprobs =
    request.logprobs === true
      ? { top: typeof request.top_logprobs === 'number' ? Math.min(Math.max(0, request.top_logprobs), 20) : 0 }
      : null;
  return {
    id: `chatcmpl-sim-${hash.slice(0, 24)}`,
    created: Math.floor(Date.now() / 1000),
    choices,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completionTokens,
      total_tokens: prompt + completionTokens,
      cached_tokens: 0,
    },
    logprobs,
  };
}

function earliestStop(text: string, stops: readonly string[]): { index: number; stop: string } | undefined {
  let best: { index: number; stop: string } | undefined;
  for (const stop of stops) {
    const index = text.indexOf(stop);
    if (index >= 0 && (!best || index < best.index)) best = { index, stop };
  }
  return best;
}

const ALTERNATIVES = [' the', ' a', ' and', ' to', ' of', '.', ','];

/** OpenAI's `logprobs.content`: one entry per token, synthetic but well-formed. */
function logprobsFor(tokens: readonly number[], top: number): JsonObject {
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
  const tokens = tokensOf(text);
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

function streamChunks(plan: Plan, rng: Rng): UpstreamChatChunk[] {
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
