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
} from './chat-engine.ts';
import { splitThinkTags, ThinkTagSplitter } from './think-tags.ts';
import { isRecord } from '../../validation.ts';

/*
 * What OpenAI-compatible servers answer, read leniently (vLLM, llama.cpp, Ollama and OpenAI differ in what they
 * omit) and normalised into the upstream types of chat-engine.ts. Anything that does not fit is a malformed
 * answer (the adapter turns it into a 502).
 */

const Count = z.number().int().nonnegative();
const Logprobs = z.record(z.string(), z.unknown()).nullable().optional();
const StopReason = z.union([z.string(), z.number()]).nullable().optional();
/** Ollama's compatibility layer has sent arguments as an object; everyone else sends the JSON string. */
const argumentsText = (value: string | Record<string, unknown>): string =>
  typeof value === 'string' ? value : JSON.stringify(value);
const Arguments = z.union([z.string(), z.record(z.string(), z.unknown())]).transform(argumentsText);

/** Usage as streams read it (readUsage): one reading for completions and chunks. */
const UsageSchema = z.unknown().transform((value, ctx): UpstreamUsage | null => {
  const usage = readUsage(value);
  if (usage !== undefined) return usage;
  ctx.addIssue({ code: 'custom', message: 'malformed usage' });
  return z.NEVER;
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
  usage: UsageSchema.optional(),
});

export const ModelListSchema = z.looseObject({ data: z.array(z.looseObject({ id: z.string().min(1) })) });

const now = () => Math.floor(Date.now() / 1000);

/** JSON.parse, with undefined for text that is not JSON (a malformed answer, judged by the caller). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `error` set on a stream event: vLLM and others report a failure after the stream started that way. */
export const reportsError = (event: unknown): boolean =>
  isRecord(event) && event.error !== undefined && event.error !== null;

/** A whole completion; with `splitThinkTags`, inline `<think>` blocks move to reasoning_content. */
export function normaliseCompletion(
  body: z.output<typeof CompletionSchema>,
  splitThink: boolean,
  fallbackId: string,
): UpstreamChatCompletion {
  const choices = body.choices.map((choice, position): UpstreamChoice => {
    let content = choice.message.content ?? null;
    let reasoning = choice.message.reasoning_content ?? choice.message.reasoning ?? null;
    if (splitThink && content !== null) {
      const split = splitThinkTags(content);
      content = split.content;
      if (split.reasoning !== null) reasoning = reasoning ? `${reasoning}\n${split.reasoning}` : split.reasoning;
    }
    const toolCalls = (choice.message.tool_calls ?? []).map((call, index): UpstreamToolCall => ({
      id: call.id ?? `call_${fallbackId}_${position}_${index}`,
      type: 'function',
      function: { name: call.function.name, arguments: call.function.arguments },
    }));
    return {
      index: choice.index ?? position,
      message: { role: 'assistant', content, reasoning_content: reasoning, tool_calls: toolCalls },
      finish_reason: choice.finish_reason ?? null,
      stop_reason: choice.stop_reason ?? null,
      logprobs: (choice.logprobs ?? null) as JsonObject | null,
    };
  });
  return { id: body.id ?? fallbackId, created: body.created ?? now(), choices, usage: body.usage ?? null };
}

/** Normalises stream chunks one by one; holds the think-tag state of each choice. */
export class ChunkNormaliser {
  private readonly splitters = new Map<number, ThinkTagSplitter>();

  constructor(
    private readonly splitThink: boolean,
    private readonly fallbackId: string,
  ) {}

  /**
   * One parsed stream event (JSON.parse's output) as a normalised chunk, or undefined when it does not have the
   * chunk's shape. Read by hand rather than with a zod schema: it runs for every event of every stream, and this
   * allocates only the chunk it returns. Accepts what ChunkSchema in the tests describes: everything optional,
   * `null` as absent, unknown fields ignored, counts whole and non-negative.
   */
  normalise(event: unknown): UpstreamChatChunk | undefined {
    if (!isRecord(event)) return undefined;
    const { id, created, choices, usage } = event;
    if (!isOptional(id, isString) || !isOptional(created, isNumber) || !isOptional(choices, Array.isArray))
      return undefined;
    const out: UpstreamChatChunk = { id: id ?? this.fallbackId, created: created ?? now(), choices: [] };
    for (const choice of (choices ?? []) as unknown[]) {
      const normalised = this.choice(choice);
      if (normalised === undefined) return undefined;
      out.choices.push(normalised);
    }
    if (usage !== undefined) {
      const read = readUsage(usage);
      if (read === undefined) return undefined;
      out.usage = read;
    }
    return out;
  }

  private choice(choice: unknown): UpstreamChunkChoice | undefined {
    if (!isRecord(choice)) return undefined;
    const { index = 0, delta: given = {}, finish_reason: finish, stop_reason: stop, logprobs } = choice;
    if (
      !isCount(index) ||
      !isRecord(given) ||
      !isOptional(finish, isString) ||
      !isOptional(stop, isStopReason) ||
      !isOptional(logprobs, isRecord)
    )
      return undefined;
    const {
      role,
      content: givenContent,
      reasoning_content: reasoningContent,
      reasoning: reasoningAlias,
      tool_calls: calls,
    } = given;
    if (
      !isOptional(role, isString) ||
      !isOptional(givenContent, isString) ||
      !isOptional(reasoningContent, isString) ||
      !isOptional(reasoningAlias, isString) ||
      !isOptional(calls, Array.isArray)
    ) {
      return undefined;
    }
    const delta: UpstreamChunkChoice['delta'] = {};
    if (role === 'assistant') delta.role = 'assistant';
    let content = givenContent ?? undefined;
    let reasoning = reasoningContent ?? reasoningAlias ?? undefined;
    if (this.splitThink) {
      const splitter = this.splitterOf(index);
      const split = content === undefined ? { content: '', reasoning: '' } : splitter.push(content);
      // The end of a choice: whatever was held back as a possible tag is text after all.
      const rest = finish ? splitter.flush() : { content: '', reasoning: '' };
      const splitContent = split.content + rest.content;
      const splitReasoning = split.reasoning + rest.reasoning;
      content = splitContent.length > 0 || givenContent === '' ? splitContent : undefined;
      if (splitReasoning.length > 0) reasoning = (reasoning ?? '') + splitReasoning;
    }
    if (content !== undefined) delta.content = content;
    if (reasoning !== undefined) delta.reasoning_content = reasoning;
    if (calls && calls.length > 0) {
      const toolCalls: UpstreamToolCallDelta[] = [];
      for (const call of calls as unknown[]) {
        const read = readToolCallDelta(call);
        if (read === undefined) return undefined;
        toolCalls.push(read);
      }
      delta.tool_calls = toolCalls;
    }
    const out: UpstreamChunkChoice = { index, delta, finish_reason: finish ?? null };
    if (stop !== undefined) out.stop_reason = stop;
    if (logprobs !== undefined) out.logprobs = logprobs;
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
  const body = parseJson(text);
  if (body === undefined) return undefined;
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string' && value.trim()) return value.trim();
    if (Array.isArray(value))
      return (
        value
          .map((item) => pick((item as { msg?: unknown } | null)?.msg ?? item))
          .filter(Boolean)
          .join('; ') || undefined
      );
    if (value && typeof value === 'object') return pick((value as { message?: unknown }).message);
    return undefined;
  };
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const message = pick(record.error) ?? pick(record.message) ?? pick(record.detail);
  return message === undefined ? undefined : message.slice(0, 1000);
}

// The hand-written reading of stream events (ChunkNormaliser): JSON values only, so no prototype or class checks.
type Guard<T> = (value: unknown) => value is T;
const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number';
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isStopReason = (value: unknown): value is string | number =>
  typeof value === 'string' || typeof value === 'number';
/** Absent, null, or of the guarded type (narrows to `T | null | undefined`). */
const isOptional = <T>(
  value: unknown,
  guard: Guard<T> | ((value: unknown) => boolean),
): value is T | null | undefined => value === undefined || value === null || guard(value);

function readUsage(usage: unknown): UpstreamUsage | null | undefined {
  if (usage === null) return null;
  if (!isRecord(usage)) return undefined;
  const {
    prompt_tokens: prompt = 0,
    completion_tokens: completion = 0,
    total_tokens: total,
    prompt_tokens_details: details,
  } = usage;
  if (!isCount(prompt) || !isCount(completion) || !isOptional(total, isCount) || !isOptional(details, isRecord))
    return undefined;
  const cached = details?.cached_tokens;
  if (!isOptional(cached, isCount)) return undefined;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total ?? prompt + completion,
    cached_tokens: cached ?? 0,
  };
}

function readToolCallDelta(call: unknown): UpstreamToolCallDelta | undefined {
  if (!isRecord(call)) return undefined;
  const { index = 0, id, type, function: fn } = call;
  if (!isCount(index) || !isOptional(id, isString) || !isOptional(type, isString) || !isOptional(fn, isRecord))
    return undefined;
  const out: UpstreamToolCallDelta = { index };
  if (id) out.id = id;
  const name = fn?.name;
  const args = fn?.arguments;
  if (!isOptional(name, isString) || !isOptional(args, (value) => isString(value) || isRecord(value))) return undefined;
  if (type === 'function' || name) out.type = 'function';
  if (fn) {
    out.function = {};
    if (name) out.function.name = name;
    if (args !== null && args !== undefined) out.function.arguments = argumentsText(args);
  }
  return out;
}
