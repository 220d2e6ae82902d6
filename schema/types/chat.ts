import { formatNano } from '../../src/billing/money.ts';
import { chargeOfChunk, type ChatStreamEvent } from '../../src/chat/chat-stream.ts';
import type {
  ChatChoice,
  ChatChunkChoice,
  ChatCompletionChunk,
  ChatCompletionResult,
  ChatUsage,
  EffectiveServiceParameters,
  WebCitation,
} from '../../src/chat/chat.types.ts';
import {
  ForbiddenError,
  InsufficientBalanceError,
  InvalidModelError,
  NotFoundError,
  SpendLimitExceededError,
  UpstreamError,
  ValidationError,
} from '../../src/errors.ts';
import type { UpstreamToolCall, UpstreamToolCallDelta } from '../../src/providers/chat/chat-engine.ts';
import { builder } from '../builder.ts';
import { ChatCompletionInputRef, toRequestBody, WebSearchModeEnum } from './chat-input.ts';
import { CurrencyEnum } from './enums.ts';
import { RateLimitExceededError } from '../../src/rate-limits/rate-limiter.ts';

/* Chat completions: the chatCompletion mutation and the chatCompletionStream subscription (SSE at /graphql/stream). */

const stopReason = (value: string | number | null | undefined): string | null =>
  value === null || value === undefined ? null : String(value);

const WebCitationRef = builder.objectRef<WebCitation>('WebCitation').implement({
  description: 'A web search result the answer may cite as [index].',
  fields: (t) => ({
    index: t.exposeInt('index'),
    title: t.exposeString('title'),
    url: t.exposeString('url'),
    content: t.exposeString('content'),
    date: t.exposeString('date', { description: 'ISO 8601, or "" when unknown.' }),
  }),
});

const ChatUsageRef = builder.objectRef<ChatUsage>('ChatUsage').implement({
  description: 'Tokens as billed: the same numbers as the usage entry.',
  fields: (t) => ({
    promptTokens: t.int({ resolve: (u) => u.prompt_tokens }),
    completionTokens: t.int({ description: 'Across all choices.', resolve: (u) => u.completion_tokens }),
    totalTokens: t.int({ resolve: (u) => u.total_tokens }),
    cachedTokens: t.int({
      description: 'Prompt tokens read from the upstream’s cache (billed at the cache price).',
      resolve: (u) => u.prompt_tokens_details?.cached_tokens ?? 0,
    }),
  }),
});

const ChatServiceParametersRef = builder.objectRef<EffectiveServiceParameters>('ChatServiceParameters').implement({
  description: 'The effective settings of a request (REST `service_parameters`).',
  fields: (t) => ({
    characterSlug: t.string({ nullable: true, resolve: (p) => p.character_slug ?? null }),
    stripThinkingResponse: t.boolean({ resolve: (p) => p.strip_thinking_response }),
    disableThinking: t.boolean({ resolve: (p) => p.disable_thinking }),
    enableWebSearch: t.field({ type: WebSearchModeEnum, resolve: (p) => p.enable_web_search }),
    enableWebCitations: t.boolean({ resolve: (p) => p.enable_web_citations }),
    enableWebScraping: t.boolean({ resolve: (p) => p.enable_web_scraping }),
    includeSearchResultsInStream: t.boolean({ resolve: (p) => p.include_search_results_in_stream }),
    returnSearchResultsAsDocuments: t.boolean({ resolve: (p) => p.return_search_results_as_documents }),
    includeSystemPrompt: t.boolean({ resolve: (p) => p.include_venice_system_prompt }),
    enableXSearch: t.boolean({ resolve: (p) => p.enable_x_search }),
    webSearchCitations: t.field({ type: [WebCitationRef], resolve: (p) => [...p.web_search_citations] }),
  }),
});

const FunctionCallRef = builder
  .objectRef<{ name?: string | undefined; arguments?: string | undefined }>('ChatFunctionCall')
  .implement({
    fields: (t) => ({
      name: t.string({ nullable: true, resolve: (f) => f.name ?? null }),
      arguments: t.string({
        nullable: true,
        description: 'JSON text (a fragment of it in a stream delta).',
        resolve: (f) => f.arguments ?? null,
      }),
    }),
  });

const ToolCallRef = builder.objectRef<UpstreamToolCall>('ChatToolCall').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    type: t.exposeString('type'),
    function: t.field({ type: FunctionCallRef, resolve: (call) => call.function }),
  }),
});

const ToolCallDeltaRef = builder.objectRef<UpstreamToolCallDelta>('ChatToolCallDelta').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    id: t.string({ nullable: true, resolve: (call) => call.id ?? null }),
    type: t.string({ nullable: true, resolve: (call) => call.type ?? null }),
    function: t.field({ type: FunctionCallRef, nullable: true, resolve: (call) => call.function ?? null }),
  }),
});

const ChatMessageRef = builder.objectRef<ChatChoice['message']>('ChatMessage').implement({
  fields: (t) => ({
    role: t.exposeString('role'),
    content: t.string({ nullable: true, resolve: (m) => m.content }),
    reasoningContent: t.string({ nullable: true, resolve: (m) => m.reasoning_content }),
    toolCalls: t.field({ type: [ToolCallRef], resolve: (m) => [...m.tool_calls] }),
  }),
});

const ChatChoiceRef = builder.objectRef<ChatChoice>('ChatChoice').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    message: t.field({ type: ChatMessageRef, resolve: (c) => c.message }),
    finishReason: t.string({ nullable: true, resolve: (c) => c.finish_reason }),
    stopReason: t.string({ nullable: true, resolve: (c) => stopReason(c.stop_reason) }),
    logprobs: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.logprobs }),
  }),
});

const ChatCompletionRef = builder.objectRef<ChatCompletionResult>('ChatCompletion').implement({
  description: 'A chat completion (REST: POST /chat/completions without stream).',
  fields: (t) => ({
    id: t.string({ resolve: (r) => r.completion.id }),
    created: t.int({ description: 'Unix seconds.', resolve: (r) => r.completion.created }),
    model: t.string({ description: 'The model id that answered.', resolve: (r) => r.completion.model }),
    choices: t.field({ type: [ChatChoiceRef], resolve: (r) => [...r.completion.choices] }),
    usage: t.field({ type: ChatUsageRef, resolve: (r) => r.completion.usage }),
    serviceParameters: t.field({ type: ChatServiceParametersRef, resolve: (r) => r.completion.service_parameters }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (r) => formatNano(r.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, description: 'The balance that paid.', resolve: (r) => r.charge.currency }),
  }),
});

const ChatDeltaRef = builder.objectRef<ChatChunkChoice['delta']>('ChatDelta').implement({
  fields: (t) => ({
    role: t.string({ nullable: true, resolve: (d) => d.role ?? null }),
    content: t.string({ nullable: true, resolve: (d) => d.content ?? null }),
    reasoningContent: t.string({ nullable: true, resolve: (d) => d.reasoning_content ?? null }),
    toolCalls: t.field({
      type: [ToolCallDeltaRef],
      nullable: true,
      resolve: (d) => (d.tool_calls ? [...d.tool_calls] : null),
    }),
  }),
});

const ChatChunkChoiceRef = builder.objectRef<ChatChunkChoice>('ChatChunkChoice').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    delta: t.field({ type: ChatDeltaRef, resolve: (c) => c.delta }),
    finishReason: t.string({ nullable: true, resolve: (c) => c.finish_reason }),
    stopReason: t.string({ nullable: true, resolve: (c) => stopReason(c.stop_reason) }),
    logprobs: t.field({ type: 'JSON', nullable: true, resolve: (c) => c.logprobs ?? null }),
  }),
});

const ChatCompletionChunkRef = builder.objectRef<ChatCompletionChunk>('ChatCompletionChunk').implement({
  description:
    'One streamed chunk. The stream may start with a chunk carrying only webSearchCitations, and ends with a chunk carrying only usage.',
  fields: (t) => ({
    id: t.exposeString('id'),
    created: t.exposeInt('created'),
    model: t.exposeString('model'),
    choices: t.field({ type: [ChatChunkChoiceRef], resolve: (c) => [...c.choices] }),
    usage: t.field({
      type: ChatUsageRef,
      nullable: true,
      description: 'The last chunk only: tokens as billed.',
      resolve: (c) => c.usage ?? null,
    }),
    charged: t.field({
      type: 'Decimal',
      nullable: true,
      description: 'The last chunk only: the amount charged, in `currency`.',
      resolve: (c) => {
        const charge = chargeOfChunk(c);
        return charge ? formatNano(charge.charged) : null;
      },
    }),
    currency: t.field({
      type: CurrencyEnum,
      nullable: true,
      description: 'The last chunk only: the balance that paid.',
      resolve: (c) => chargeOfChunk(c)?.currency ?? null,
    }),
    webSearchCitations: t.field({
      type: [WebCitationRef],
      nullable: true,
      description: 'The first chunk only, with includeSearchResultsInStream.',
      resolve: (c) => (c.service_parameters ? [...c.service_parameters.web_search_citations] : null),
    }),
  }),
});

builder.mutationFields((t) => ({
  chatCompletion: t.field({
    type: ChatCompletionRef,
    description:
      'A chat completion, billed per token from the model’s pricing (the worst case is held first: 402-class errors come before any upstream call).',
    authScopes: { account: true },
    args: { input: t.arg({ type: ChatCompletionInputRef, required: true }) },
    errors: {
      types: [
        ValidationError,
        InvalidModelError,
        NotFoundError,
        ForbiddenError,
        InsufficientBalanceError,
        SpendLimitExceededError,
        UpstreamError,
        RateLimitExceededError,
      ],
    },
    // A client that goes away aborts the upstream call, and nothing is charged (as on REST).
    resolve: (_root, { input }, context) =>
      context.services.chat.complete(context.auth, toRequestBody(input), { signal: context.signal }),
  }),
}));

builder.subscriptionFields((t) => ({
  chatCompletionStream: t.field({
    type: ChatCompletionChunkRef,
    description:
      'A streaming chat completion over SSE (graphql-sse at /graphql/stream): chunks as the model writes them, ending with a usage chunk. ' +
      'A failure after the stream began arrives as an error result, and the tokens received are charged. Unsubscribing stops the model.',
    authScopes: { account: true },
    args: { input: t.arg({ type: ChatCompletionInputRef, required: true }) },
    subscribe: (_root, { input }, context): Promise<AsyncIterable<ChatStreamEvent>> =>
      context.services.chat.stream(context.auth, toRequestBody(input), { signal: context.signal }),
    resolve: (event: ChatStreamEvent) => {
      if (event.type === 'error') throw event.error;
      return event.chunk;
    },
  }),
}));
