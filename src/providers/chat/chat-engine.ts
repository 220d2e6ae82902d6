/**
 * The chat capability (src/providers/): one interface, one adapter per upstream protocol. The wire
 * format between the chat service and an adapter is the OpenAI chat-completions JSON, because every upstream we
 * speak to (vLLM, llama.cpp, Ollama, OpenAI, the simulator) speaks it; the service builds the upstream body,
 * the adapter only moves it. Which adapter serves a model, with fallbacks, retries and cooldowns, is decided by
 * the chat gateway (chat-gateway.ts) from the model's provider bindings.
 */

/** A JSON object as sent to / received from an upstream. */
export type JsonObject = { [key: string]: unknown };

/** The upstream request: the OpenAI body with `model` set to the upstream model name. `stream` is set by the adapter. */
export interface UpstreamChatRequest extends JsonObject {
  model: string;
  messages: JsonObject[];
}

export interface UpstreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** OpenAI's `prompt_tokens_details.cached_tokens`, normalised here (0 when the upstream reports none). */
  cached_tokens: number;
}

export interface UpstreamToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface UpstreamChoice {
  index: number;
  message: {
    role: 'assistant';
    content: string | null;
    /** Reasoning text, from `reasoning_content` / `reasoning`, or split out of inline `<think>` blocks. */
    reasoning_content: string | null;
    tool_calls: UpstreamToolCall[];
  };
  finish_reason: string | null;
  stop_reason: string | number | null;
  logprobs: JsonObject | null;
}

export interface UpstreamChatCompletion {
  id: string;
  created: number;
  choices: UpstreamChoice[];
  /** Null when the upstream did not report usage (the service then counts with a tokenizer). */
  usage: UpstreamUsage | null;
}

export interface UpstreamToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface UpstreamChunkChoice {
  index: number;
  delta: { role?: 'assistant'; content?: string; reasoning_content?: string; tool_calls?: UpstreamToolCallDelta[] };
  finish_reason: string | null;
  stop_reason?: string | number | null;
  logprobs?: JsonObject | null;
}

export interface UpstreamChatChunk {
  id: string;
  created: number;
  choices: UpstreamChunkChoice[];
  /** Present on the final usage chunk when the upstream reports it. */
  usage?: UpstreamUsage | null;
}

export interface ChatCallOptions {
  /** Aborts the upstream request (the client went away, or the service's deadline passed). */
  readonly signal?: AbortSignal | undefined;
  /** The model inlines its reasoning in `<think>…</think>`: split it out into `reasoning_content`. */
  readonly splitThinkTags?: boolean | undefined;
  /** For the upstream's logs (X-Request-ID); never contains user content. */
  readonly requestId?: string | undefined;
  /** The model reasons and thinking is not disabled: the simulator then emits `reasoning_content`. */
  readonly reasoning?: boolean | undefined;
}

/** A stream that has started: the upstream accepted the request and its first byte arrived. */
export interface UpstreamChatStream extends AsyncIterable<UpstreamChatChunk> {
  /** Stops reading and closes the upstream connection; safe to call more than once. */
  cancel(): void;
}

export interface ChatEngine {
  /** The operator's provider id (or `env:openai-compatible` for the env shortcut); never shown to callers. */
  readonly id: string;
  readonly type: 'openai-compatible' | 'simulator';
  /**
   * One non-streaming completion. Failures are UpstreamErrors: 502 for a connection error, an HTTP error or a
   * malformed body, 504 for a timeout; a 4xx from the upstream that is the caller's fault is a ValidationError.
   */
  complete(request: UpstreamChatRequest, options: ChatCallOptions): Promise<UpstreamChatCompletion>;
  /**
   * Starts a streaming completion; resolves once the upstream answered with a stream (so a failure before the
   * first byte can still be retried or sent to a fallback). Errors while iterating are UpstreamErrors.
   */
  stream(request: UpstreamChatRequest, options: ChatCallOptions): Promise<UpstreamChatStream>;
  /** The upstream's model ids (`GET /models`), for zero-config discovery; absent when the upstream has none. */
  listModels?(options?: { signal?: AbortSignal }): Promise<string[]>;
  close?(): Promise<void>;
}
