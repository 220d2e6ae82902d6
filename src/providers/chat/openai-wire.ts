import { z } from 'zod';
import type {
  JsonObject,
  UpstreamChatChunk,
  UpstreamChatCompletion,
  UpstreamChoice,
  UpstreamChunkChoice,
  UpstreamToolCall,
  UpstreamToolCallDelta,
  UpstreamUsage,
} from './chat-provider.ts';
import { splitThinkTags, ThinkTagSplitter } from './think-tags.ts';

/*
 * What OpenAI-compatible servers answer, read leniently (vLLM, llama.cpp, Ollama and OpenAI differ in what they
 * omit) and normalised into the upstream types of chat-provider.ts. Anything that does not fit is a malformed
 * answer (the adapter turns it into a 502).
 */

const Count = z.number().int().nonnegative();
const Logprobs = z.record(z.string(), z.unknown()).nullable().optional();
const StopReason = z.union([z.string(), z.number()]).nullable().optional();
/** Ollama's compatibility layer has sent arguments as an object; everyone else sends the JSON string. */
const Arguments = z.union([z.string(), z.record(z.string(), z.unknown())]).transform((value) => (typeof value === 'string' ? value : JSON.stringify(value)));

const UsageSchema = z.looseObject({
  prompt_tokens: Count.default(0),
  completion_tokens: Count.default(0),
  total_tokens: Count.optional(),
  prompt_tokens_details: z.looseObject({ cached_tokens: Count.nullable().optional() }).nullable().optional(),
});

const ToolCallSchema = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: Arguments.default('{}') }),
});

const MessageSchema = z.looseObject({
  content: z.string().nullable().optional(),
  reasoning_content: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
  tool_calls: z.array(ToolCallSchema).nullable().optional(),
});

export const CompletionSchema = z.looseObject({
  id: z.string().optional(),
  created: z.number().optional(),
  choices: z
    .array(
      z.looseObject({
        index: Count.optional(),
        message: MessageSchema,
        finish_reason: z.string().nullable().optional(),
        stop_reason: StopReason,
        logprobs: Logprobs,
      }),
    )
    .min(1),
  usage: UsageSchema.nullable().optional(),
});

const ToolCallDeltaSchema = z.looseObject({
  index: Count.default(0),
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string().nullable().optional(), arguments: Arguments.nullable().optional() }).optional(),
});

export const ChunkSchema = z.looseObject({
  id: z.string().optional(),
  created: z.number().optional(),
  choices: z
    .array(
      z.looseObject({
        index: Count.default(0),
        delta: z
          .looseObject({
            role: z.string().nullable().optional(),
            content: z.string().nullable().optional(),
            reasoning_content: z.string().nullable().optional(),
            reasoning: z.string().nullable().optional(),
            tool_calls: z.array(ToolCallDeltaSchema).nullable().optional(),
          })
          .default({}),
        finish_reason: z.string().nullable().optional(),
        stop_reason: StopReason,
        logprobs: Logprobs,
      }),
    )
    .nullable()
    .default([]),
  usage: UsageSchema.nullable().optional(),
  /** vLLM and others report a failure after the stream started as a data event with `error`. */
  error: z.unknown().optional(),
});

export const ModelListSchema = z.looseObject({ data: z.array(z.looseObject({ id: z.string().min(1) })) });

const now = () => Math.floor(Date.now() / 1000);

export function normaliseUsage(usage: z.output<typeof UsageSchema> | null | undefined): UpstreamUsage | null {
  if (!usage) return null;
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

/** A whole completion; with `splitThinkTags`, inline `<think>` blocks move to reasoning_content. */
export function normaliseCompletion(body: z.output<typeof CompletionSchema>, splitThink: boolean, fallbackId: string): UpstreamChatCompletion {
  const choices = body.choices.map((choice, position): UpstreamChoice => {
    let content = choice.message.content ?? null;
    let reasoning = choice.message.reasoning_content ?? choice.message.reasoning ?? null;
    if (splitThink && content !== null) {
      const split = splitThinkTags(content);
      content = split.content;
      if (split.reasoning !== null) reasoning = reasoning ? `${reasoning}\n${split.reasoning}` : split.reasoning;
    }
    const toolCalls = (choice.message.tool_calls ?? []).map(
      (call, index): UpstreamToolCall => ({ id: call.id ?? `call_${fallbackId}_${position}_${index}`, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }),
    );
    return {
      index: choice.index ?? position,
      message: { role: 'assistant', content, reasoning_content: reasoning, tool_calls: toolCalls },
      finish_reason: choice.finish_reason ?? null,
      stop_reason: choice.stop_reason ?? null,
      logprobs: (choice.logprobs ?? null) as JsonObject | null,
    };
  });
  return { id: body.id ?? fallbackId, created: body.created ?? now(), choices, usage: normaliseUsage(body.usage) };
}

/** Normalises stream chunks one by one; holds the think-tag state of each choice. */
export class ChunkNormaliser {
  private readonly splitters = new Map<number, ThinkTagSplitter>();

  constructor(
    private readonly splitThink: boolean,
    private readonly fallbackId: string,
  ) {}

  normalise(chunk: z.output<typeof ChunkSchema>): UpstreamChatChunk {
    const choices = (chunk.choices ?? []).map((choice): UpstreamChunkChoice => {
      const delta: UpstreamChunkChoice['delta'] = {};
      if (choice.delta.role === 'assistant') delta.role = 'assistant';
      let content = choice.delta.content ?? undefined;
      let reasoning = choice.delta.reasoning_content ?? choice.delta.reasoning ?? undefined;
      if (this.splitThink) {
        const splitter = this.splitterOf(choice.index);
        const split = content === undefined ? { content: '', reasoning: '' } : splitter.push(content);
        // The end of a choice: whatever was held back as a possible tag is text after all.
        const rest = choice.finish_reason ? splitter.flush() : { content: '', reasoning: '' };
        const splitContent = split.content + rest.content;
        const splitReasoning = split.reasoning + rest.reasoning;
        content = splitContent.length > 0 || choice.delta.content === '' ? splitContent : undefined;
        if (splitReasoning.length > 0) reasoning = (reasoning ?? '') + splitReasoning;
      }
      if (content !== undefined) delta.content = content;
      if (reasoning !== undefined && reasoning !== null) delta.reasoning_content = reasoning;
      if (choice.delta.tool_calls && choice.delta.tool_calls.length > 0) {
        delta.tool_calls = choice.delta.tool_calls.map((call): UpstreamToolCallDelta => {
          const out: UpstreamToolCallDelta = { index: call.index };
          if (call.id) out.id = call.id;
          if (call.type === 'function' || call.function?.name) out.type = 'function';
          if (call.function) {
            const fn: { name?: string; arguments?: string } = {};
            if (call.function.name) fn.name = call.function.name;
            if (call.function.arguments !== null && call.function.arguments !== undefined) fn.arguments = call.function.arguments;
            out.function = fn;
          }
          return out;
        });
      }
      const out: UpstreamChunkChoice = { index: choice.index, delta, finish_reason: choice.finish_reason ?? null };
      if (choice.stop_reason !== undefined) out.stop_reason = choice.stop_reason;
      if (choice.logprobs !== undefined) out.logprobs = (choice.logprobs ?? null) as JsonObject | null;
      return out;
    });
    const out: UpstreamChatChunk = { id: chunk.id ?? this.fallbackId, created: chunk.created ?? now(), choices };
    if (chunk.usage !== undefined) out.usage = normaliseUsage(chunk.usage);
    return out;
  }

  /** Text still held back when the stream ended without a finish_reason (a final chunk, or null when there is none). */
  drain(): UpstreamChatChunk | null {
    const choices: UpstreamChunkChoice[] = [];
    for (const [index, splitter] of this.splitters) {
      const rest = splitter.flush();
      if (rest.content.length === 0 && rest.reasoning.length === 0) continue;
      const delta: UpstreamChunkChoice['delta'] = {};
      if (rest.content) delta.content = rest.content;
      if (rest.reasoning) delta.reasoning_content = rest.reasoning;
      choices.push({ index, delta, finish_reason: null });
    }
    return choices.length > 0 ? { id: this.fallbackId, created: now(), choices } : null;
  }

  private splitterOf(index: number): ThinkTagSplitter {
    let splitter = this.splitters.get(index);
    if (!splitter) {
      splitter = new ThinkTagSplitter();
      this.splitters.set(index, splitter);
    }
    return splitter;
  }
}

/** The message of an upstream error body: OpenAI `{error: {message}}`, vLLM `{message}`, FastAPI `{detail}`, Ollama `{error: "…"}`. */
export function upstreamErrorMessage(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string' && value.trim()) return value.trim();
    if (Array.isArray(value)) return value.map((item) => pick((item as { msg?: unknown } | null)?.msg ?? item)).filter(Boolean).join('; ') || undefined;
    if (value && typeof value === 'object') return pick((value as { message?: unknown }).message);
    return undefined;
  };
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const message = pick(record.error) ?? pick(record.message) ?? pick(record.detail);
  return message === undefined ? undefined : message.slice(0, 1000);
}
