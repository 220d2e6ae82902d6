import { randomBytes } from 'node:crypto';
import type { ChatCompletion, ChatCompletionChunk, ChatUsage } from '../chat/chat.types.ts';
import type { JsonObject } from '../providers/chat/chat-engine.ts';

/*
 * Chat results in the Responses shapes: output items (reasoning, message, function_call), the response object, and
 * the typed event stream the `openai` client's ResponseStream accumulates (response.created, output_item.added,
 * content_part.added, output_text.delta, …, response.completed), each with a sequence_number.
 */

export const newId = (prefix: string): string => `${prefix}_${randomBytes(16).toString('hex')}`;

export type OutputItem = JsonObject & { type: string; id: string };

/** What the response object repeats of its request. */
export interface ResponseEcho {
  readonly id: string;
  readonly created_at: number;
  readonly instructions: string | null;
  readonly previous_response_id: string | null;
  readonly max_output_tokens: number | null;
  readonly temperature: number | null;
  readonly top_p: number | null;
  readonly tools: readonly unknown[];
  readonly tool_choice: unknown;
  readonly store: boolean;
  readonly metadata: Record<string, string>;
}

export function responseUsage(usage: ChatUsage) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

export function responseObject(
  echo: ResponseEcho,
  model: string,
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed',
  output: readonly OutputItem[],
  extra: { usage?: ChatUsage; error?: { code: string; message: string } } = {},
): JsonObject {
  const text = output
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content as { text: string }[])
    .map((part) => part.text)
    .join('');
  return {
    id: echo.id,
    object: 'response',
    created_at: echo.created_at,
    status,
    error: extra.error ?? null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model,
    output,
    output_text: text,
    parallel_tool_calls: true,
    previous_response_id: echo.previous_response_id,
    reasoning: { effort: null, summary: null },
    store: echo.store,
    temperature: echo.temperature,
    text: { format: { type: 'text' } },
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: 'disabled',
    usage: extra.usage ? responseUsage(extra.usage) : null,
    metadata: echo.metadata,
  };
}

const messageItem = (id: string, text: string, status: string): OutputItem => ({
  type: 'message',
  id,
  status,
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const reasoningItem = (id: string, text: string): OutputItem => ({
  type: 'reasoning',
  id,
  summary: [],
  content: [{ type: 'reasoning_text', text }],
});
const functionCallItem = (id: string, callId: string, name: string, args: string, status: string): OutputItem => ({
  type: 'function_call',
  id,
  call_id: callId,
  name,
  arguments: args,
  status,
});

/** The output items of a finished completion (its first choice). */
export function outputOf(completion: ChatCompletion): OutputItem[] {
  const message = completion.choices[0]?.message;
  if (!message) return [];
  const items: OutputItem[] = [];
  if (message.reasoning_content) items.push(reasoningItem(newId('rs'), message.reasoning_content));
  if (message.content) items.push(messageItem(newId('msg'), message.content, 'completed'));
  for (const call of message.tool_calls)
    items.push(functionCallItem(newId('fc'), call.id, call.function.name, call.function.arguments, 'completed'));
  return items;
}

/** The output as chat messages, for the stored conversation (previous_response_id). */
export function outputMessages(output: readonly OutputItem[]): JsonObject[] {
  const text = output
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content as { text: string }[])
    .map((part) => part.text)
    .join('');
  const calls = output
    .filter((item) => item.type === 'function_call')
    .map((item) => ({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }));
  if (text === '' && calls.length === 0) return [];
  return [{ role: 'assistant', content: text === '' ? null : text, ...(calls.length > 0 && { tool_calls: calls }) }];
}

interface OpenText {
  readonly index: number;
  readonly id: string;
  text: string;
}
interface OpenCall {
  readonly index: number;
  readonly id: string;
  readonly callId: string;
  name: string;
  args: string;
}

/**
 * Turns a chat stream's chunks into Responses events. Output indexes follow the order items appear in: reasoning,
 * then the message, then each tool call. Items stay open until the stream ends (the reasoning item closes when
 * the answer starts), then each gets its done events before response.completed.
 */
type ToolCallDelta = NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number];

export class ResponseEventStream {
  private sequence = 0;
  private readonly output: OutputItem[] = [];
  private reasoning: OpenText | undefined;
  private message: OpenText | undefined;
  private readonly calls = new Map<number, OpenCall>();
  finishReason: string | null = null;

  constructor(
    private readonly echo: ResponseEcho,
    private readonly model: string,
  ) {}

  private event(type: string, fields: JsonObject): JsonObject {
    return { type, sequence_number: this.sequence++, ...fields };
  }

  start(): JsonObject[] {
    const response = responseObject(this.echo, this.model, 'in_progress', []);
    return [this.event('response.created', { response }), this.event('response.in_progress', { response })];
  }

  chunk(chunk: ChatCompletionChunk): JsonObject[] {
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return [];
    const delta = choice.delta;
    const events: JsonObject[] = [];
    if (delta.reasoning_content) events.push(...this.reasoningDelta(delta.reasoning_content));
    if (delta.content) events.push(...this.textDelta(delta.content));
    for (const call of delta.tool_calls ?? []) events.push(...this.toolCallDelta(call));
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return events;
  }

  /** Reasoning text: opens the reasoning item on its first piece. */
  private reasoningDelta(text: string): JsonObject[] {
    const events: JsonObject[] = [];
    if (!this.reasoning) {
      this.reasoning = { index: this.output.length, id: newId('rs'), text: '' };
      this.output.push(reasoningItem(this.reasoning.id, ''));
      events.push(
        this.event('response.output_item.added', {
          output_index: this.reasoning.index,
          item: { type: 'reasoning', id: this.reasoning.id, summary: [], content: [] },
        }),
        this.event('response.content_part.added', {
          item_id: this.reasoning.id,
          output_index: this.reasoning.index,
          content_index: 0,
          part: { type: 'reasoning_text', text: '' },
        }),
      );
    }
    this.reasoning.text += text;
    events.push(
      this.event('response.reasoning_text.delta', {
        item_id: this.reasoning.id,
        output_index: this.reasoning.index,
        content_index: 0,
        delta: text,
      }),
    );
    return events;
  }

  /** Answer text: closes the reasoning, opens the message item on its first piece. */
  private textDelta(text: string): JsonObject[] {
    const events: JsonObject[] = [];
    events.push(...this.closeReasoning());
    if (!this.message) {
      this.message = { index: this.output.length, id: newId('msg'), text: '' };
      const item = { ...messageItem(this.message.id, '', 'in_progress'), content: [] };
      this.output.push(item);
      events.push(
        this.event('response.output_item.added', { output_index: this.message.index, item }),
        this.event('response.content_part.added', {
          item_id: this.message.id,
          output_index: this.message.index,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [] },
        }),
      );
    }
    this.message.text += text;
    events.push(
      this.event('response.output_text.delta', {
        item_id: this.message.id,
        output_index: this.message.index,
        content_index: 0,
        delta: text,
        logprobs: [],
      }),
    );
    return events;
  }

  /** A piece of a tool call: closes the reasoning, opens the call's item on its first piece. */
  private toolCallDelta(call: ToolCallDelta): JsonObject[] {
    const events: JsonObject[] = [];
    events.push(...this.closeReasoning());
    let open = this.calls.get(call.index);
    if (!open) {
      open = {
        index: this.output.length,
        id: newId('fc'),
        callId: call.id ?? newId('call'),
        name: call.function?.name ?? '',
        args: '',
      };
      this.calls.set(call.index, open);
      const item = functionCallItem(open.id, open.callId, open.name, '', 'in_progress');
      this.output.push(item);
      events.push(this.event('response.output_item.added', { output_index: open.index, item }));
    } else if (call.function?.name) open.name += call.function.name;
    const args = call.function?.arguments;
    if (args) {
      open.args += args;
      events.push(
        this.event('response.function_call_arguments.delta', {
          item_id: open.id,
          output_index: open.index,
          delta: args,
        }),
      );
    }
    return events;
  }

  /** The closing events and response.completed (or incomplete, when the output limit cut the answer). */
  finish(usage: ChatUsage | undefined): { events: JsonObject[]; response: JsonObject } {
    const events = [...this.closeReasoning()];
    if (this.message) {
      const { index, id, text } = this.message;
      const part = { type: 'output_text', text, annotations: [] };
      this.output[index] = messageItem(id, text, 'completed');
      events.push(
        this.event('response.output_text.done', { item_id: id, output_index: index, content_index: 0, text }),
        this.event('response.content_part.done', { item_id: id, output_index: index, content_index: 0, part }),
        this.event('response.output_item.done', { output_index: index, item: this.output[index]! }),
      );
    }
    for (const call of this.calls.values()) {
      this.output[call.index] = functionCallItem(call.id, call.callId, call.name, call.args, 'completed');
      events.push(
        this.event('response.function_call_arguments.done', {
          item_id: call.id,
          output_index: call.index,
          arguments: call.args,
        }),
        this.event('response.output_item.done', { output_index: call.index, item: this.output[call.index]! }),
      );
    }
    const status = this.finishReason === 'length' ? 'incomplete' : 'completed';
    const response = responseObject(this.echo, this.model, status, this.output, usage ? { usage } : {});
    events.push(this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    return { events, response };
  }

  /** response.failed, for a stream that broke after it began. */
  failed(error: { code: string; message: string }): JsonObject {
    return this.event('response.failed', {
      response: responseObject(this.echo, this.model, 'failed', this.output, { error }),
    });
  }

  get items(): readonly OutputItem[] {
    return this.output;
  }

  private closeReasoning(): JsonObject[] {
    const open = this.reasoning;
    if (!open || this.output[open.index]?.status === 'completed') return [];
    const item = { ...reasoningItem(open.id, open.text), status: 'completed' };
    this.output[open.index] = item;
    return [
      this.event('response.reasoning_text.done', {
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        text: open.text,
      }),
      this.event('response.content_part.done', {
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        part: { type: 'reasoning_text', text: open.text },
      }),
      this.event('response.output_item.done', { output_index: open.index, item }),
    ];
  }
}
