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
  // The media of the message being answered, named at the start of a plain reply.
  const media = await describeMedia(lastUser?.content);
  const received = media === undefined ? '' : `Received ${media}. `;

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
      content = received + replyText(rng, lastUserText, rng.int(25, 70));
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
      const tokens = encodeText(text);
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
      const needed = encodeText(call.function.name + call.function.arguments).length;
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
