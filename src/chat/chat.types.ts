import type { SettledCharge } from '../billing/billing.types.ts';
import type { JsonObject, UpstreamToolCall, UpstreamToolCallDelta } from '../providers/chat/chat-provider.ts';
import type { WebSearchMode } from './chat.inputs.ts';

/*
 * Chat results as the service returns them. They keep the OpenAI field names (snake_case) because that shape is
 * the product here: REST serialises them as they are (no per-chunk remapping on the hot path) and GraphQL
 * exposes them as typed camelCase fields.
 */

/** One web search hit cited in an answer (`[n]` in the text refers to `index`). */
export interface WebCitation {
  readonly index: number;
  readonly title: string;
  readonly url: string;
  readonly content: string;
  readonly date: string;
}

/** The effective `service_parameters` of a request, echoed in the response (docs/api.md). */
export interface EffectiveServiceParameters {
  readonly character_slug?: string;
  readonly strip_thinking_response: boolean;
  readonly disable_thinking: boolean;
  readonly enable_e2ee: boolean;
  readonly enable_web_search: WebSearchMode;
  readonly enable_web_scraping: boolean;
  readonly enable_web_citations: boolean;
  readonly include_search_results_in_stream: boolean;
  readonly return_search_results_as_documents: boolean;
  readonly include_venice_system_prompt: boolean;
  readonly enable_x_search: boolean;
  readonly web_search_citations: readonly WebCitation[];
}

/** Usage as billed: the same numbers as the usage entry's inferenceDetails and lines. */
export interface ChatUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: { readonly cached_tokens: number } | null;
  readonly completion_tokens_details: null;
}

export interface ChatChoice {
  readonly index: number;
  readonly message: {
    readonly role: 'assistant';
    readonly content: string | null;
    readonly reasoning_content: string | null;
    readonly tool_calls: readonly UpstreamToolCall[];
  };
  readonly finish_reason: string | null;
  readonly stop_reason: string | number | null;
  readonly logprobs: JsonObject | null;
}

export interface ChatCompletion {
  readonly id: string;
  readonly object: 'chat.completion';
  readonly created: number;
  readonly model: string;
  readonly choices: readonly ChatChoice[];
  readonly usage: ChatUsage;
  readonly prompt_logprobs: null;
  readonly service_parameters: EffectiveServiceParameters;
}

export interface ChatChunkChoice {
  readonly index: number;
  readonly delta: {
    readonly role?: 'assistant';
    readonly content?: string;
    readonly reasoning_content?: string;
    readonly tool_calls?: readonly UpstreamToolCallDelta[];
  };
  readonly finish_reason: string | null;
  readonly stop_reason?: string | number | null;
  readonly logprobs?: JsonObject | null;
}

/** One streamed `chat.completion.chunk`; the citations chunk and the final usage chunk have `choices: []`. */
export interface ChatCompletionChunk {
  readonly id: string;
  readonly object: 'chat.completion.chunk';
  readonly created: number;
  readonly model: string;
  readonly choices: readonly ChatChunkChoice[];
  readonly usage?: ChatUsage;
  readonly service_parameters?: Pick<EffectiveServiceParameters, 'web_search_citations'>;
}

/** A completion with what it cost (for balance headers and GraphQL). */
export interface ChatCompletionResult {
  readonly completion: ChatCompletion;
  readonly charge: SettledCharge;
}
