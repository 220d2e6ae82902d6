import { createHash } from 'node:crypto';
import { decodeTokens, encodeText } from '../../tokenizer.ts';
import type { ChatCallOptions, UpstreamChatRequest, UpstreamToolCall, UpstreamUsage } from './chat-engine.ts';
import { valueForSchema } from './simulator-json.ts';
import { describeMedia } from './simulator-media.ts';
import {
  functionTools,
  maxTokensOf,
  promptTokens,
  responseSchema,
  stopStrings,
  textOf,
  toolToCall,
} from './simulator-request.ts';
import { reasoningText, replyText, Rng, toolResultText, topicWords } from './simulator-text.ts';

/*
 * The simulator's whole reply, decided before anything is sent: per choice its reasoning, text or tool call, cut at
 * `stop` and at the token limit, and the usage. complete() returns it at once; stream() sends it in pieces.
 */

const MAX_CHOICES = 128;

export interface PlannedChoice {
  content: string | null;
  reasoning: string | null;
  toolCalls: UpstreamToolCall[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  stopReason: string | null;
}

export interface Plan {
  id: string;
  created: number;
  choices: PlannedChoice[];
  usage: UpstreamUsage;
  logprobs: { top: number } | null;
}

export async function planReply(request: UpstreamChatRequest, options: ChatCallOptions): Promise<Plan> {
  const messages = request.messages;
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
  // The media of the message being answered, named at the start of a plain reply.
  const media = await describeMedia(lastUser?.content);
  const received = media === undefined ? '' : `Received ${media}. `;

  const scene: Scene = { request, hash, lastUserText, topic, received };
  let completionTokens = 0;
  const choices = Array.from({ length: n }, (_, index): PlannedChoice => {
    const rng = Rng.from(key, index);
    const reasoning = options.reasoning ? reasoningText(rng, lastUserText) : null;
    const { content, toolCalls } = draftAnswer(scene, tools, format, index, rng);
    const cut = content !== null && stops.length > 0 ? earliestStop(content, stops) : undefined;
    const draft: PlannedChoice = {
      content: cut && content !== null ? content.slice(0, cut.index) : content,
      reasoning,
      toolCalls,
      finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      stopReason: cut ? cut.stop : null,
    };
    const fitted = fitTokens(draft, maxTokens ?? Number.POSITIVE_INFINITY);
    completionTokens += fitted.tokens;
    return fitted.choice;
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

/** What every choice of one reply is drawn from. */
interface Scene {
  readonly request: UpstreamChatRequest;
  readonly hash: string;
  readonly lastUserText: string;
  readonly topic: ReturnType<typeof topicWords>;
  /** "Received …" for the media of the message answered, else empty. */
  readonly received: string;
}

/** One choice's answer before cutting: a tool call, JSON for a response format, a tool result's echo, or prose. */
function draftAnswer(
  scene: Scene,
  tools: ReturnType<typeof functionTools>,
  format: ReturnType<typeof responseSchema>,
  index: number,
  rng: Rng,
): { content: string | null; toolCalls: UpstreamToolCall[] } {
  const { request, hash, lastUserText, topic } = scene;
  const messages = request.messages;
  const last = messages.at(-1);
  const tool = toolToCall(request, tools, lastUserText, last?.role, rng);
  if (tool) {
    const call: UpstreamToolCall = {
      id: `call_${hash.slice(0, 12)}${index}`,
      type: 'function',
      function: { name: tool.name, arguments: JSON.stringify(valueForSchema(tool.parameters, rng, topic)) },
    };
    return { content: null, toolCalls: [call] };
  }
  if (format?.kind === 'schema')
    return { content: JSON.stringify(valueForSchema(format.schema, rng, topic)), toolCalls: [] };
  if (format?.kind === 'object')
    return { content: JSON.stringify({ answer: replyText(rng, lastUserText, 15) }), toolCalls: [] };
  if (last?.role === 'tool') {
    const callId = last.tool_call_id;
    const caller = messages
      .flatMap((message) => (Array.isArray(message.tool_calls) ? (message.tool_calls as UpstreamToolCall[]) : []))
      .find((call) => call.id === callId);
    return { content: toolResultText(caller?.function?.name, textOf(last.content)), toolCalls: [] };
  }
  return { content: scene.received + replyText(rng, lastUserText, rng.int(25, 70)), toolCalls: [] };
}

/**
 * A choice cut to the token limit, which covers reasoning first, then the answer (as OpenAI's
 * max_completion_tokens does), and the completion tokens it counts.
 */
function fitTokens(draft: PlannedChoice, maxTokens: number): { choice: PlannedChoice; tokens: number } {
  let { content, reasoning, toolCalls, finishReason, stopReason } = draft;
  let budget = maxTokens;
  let tokens = 0;
  const take = (text: string): string => {
    const encoded = encodeText(text);
    if (encoded.length <= budget) {
      budget -= encoded.length;
      tokens += encoded.length;
      return text;
    }
    const kept = encoded.slice(0, budget);
    tokens += kept.length;
    budget = 0;
    finishReason = 'length';
    return decodeTokens(kept).replace(/\uFFFD+$/, '');
  };
  if (reasoning !== null) reasoning = take(reasoning);
  if (content !== null) content = finishReason === 'length' ? '' : take(content);
  if (toolCalls.length > 0) {
    const [call] = toolCalls as [UpstreamToolCall];
    const needed = encodeText(call.function.name + call.function.arguments).length;
    tokens += Math.min(needed, budget);
    if (finishReason === 'length' || needed > budget) {
      // Cut off mid-call: no usable call, only "length".
      toolCalls = [];
      content = '';
      finishReason = 'length';
    }
    budget = Math.max(0, budget - needed);
  }
  if (finishReason === 'length') stopReason = null;
  return { choice: { content, reasoning, toolCalls, finishReason, stopReason }, tokens };
}

function earliestStop(text: string, stops: readonly string[]): { index: number; stop: string } | undefined {
  let best: { index: number; stop: string } | undefined;
  for (const stop of stops) {
    const index = text.indexOf(stop);
    if (index >= 0 && (!best || index < best.index)) best = { index, stop };
  }
  return best;
}
