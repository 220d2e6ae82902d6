import { z } from 'zod';
import type { ChatStreamEvent } from '../../src/chat/chat-stream.ts';
import { ChatCompletionInput, WEB_SEARCH_MODES } from '../../src/chat/chat.inputs.ts';
import type { ChatCompletion } from '../../src/chat/chat.types.ts';
import { compressJson } from '../compression.ts';
import { errorStatus } from '../error-map.ts';
import { balanceHeaders } from '../http.ts';
import type { Route } from '../router.ts';
import { sse } from '../sse.ts';

/*
 * POST /chat/completions (docs/api.md). The body and the stream are the OpenAI shapes, as is. SSE: each upstream
 * chunk is written as it arrives; a client that goes away aborts the upstream call, which is then settled on what
 * was delivered.
 */

const ToolCallWire = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
const UsageWire = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).nullable(),
  completion_tokens_details: z.null(),
});
const CitationWire = z.object({
  index: z.number().int(),
  title: z.string(),
  url: z.string(),
  content: z.string(),
  date: z.string(),
});
const ServiceParametersWire = z
  .object({
    character_slug: z.string().optional(),
    strip_thinking_response: z.boolean(),
    disable_thinking: z.boolean(),
    enable_e2ee: z.boolean(),
    enable_web_search: z.enum(WEB_SEARCH_MODES),
    enable_web_scraping: z.boolean(),
    enable_web_citations: z.boolean(),
    include_search_results_in_stream: z.boolean(),
    return_search_results_as_documents: z.boolean(),
    include_venice_system_prompt: z.boolean(),
    enable_x_search: z.boolean(),
    web_search_citations: z.array(CitationWire),
  })
  .describe('The effective settings of this request');
const ChatCompletionWire = z.object({
  id: z
    .string()
    .describe('Unique per completion (`chatcmpl-` and 32 random hex digits); the request id is in X-Request-ID'),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string().describe('The model id that answered'),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal('assistant'),
        content: z.string().nullable(),
        reasoning_content: z.string().nullable(),
        tool_calls: z.array(ToolCallWire),
      }),
      finish_reason: z.string().nullable(),
      stop_reason: z.union([z.string(), z.number()]).nullable(),
      logprobs: z.record(z.string(), z.unknown()).nullable(),
    }),
  ),
  usage: UsageWire.describe('As billed: equals the usage entry of this request'),
  prompt_logprobs: z.null(),
  service_parameters: ServiceParametersWire,
  venice_parameters: ServiceParametersWire.describe(
    'The same object under its alias, for clients written for the original service',
  ),
});

/**
 * `service_parameters` echoed under its alias `venice_parameters` too, next to it: clients written for the original
 * service read the alias. Applied wherever the echo appears (the body, the citations chunk of a stream).
 */
export function withParameterAlias<T extends { readonly service_parameters?: unknown }>(
  body: T,
): T | (T & { venice_parameters: unknown }) {
  return body.service_parameters === undefined ? body : { ...body, venice_parameters: body.service_parameters };
}

/** A completion as its JSON body. */
export const chatCompletionBody = (completion: ChatCompletion): string =>
  JSON.stringify(withParameterAlias(completion));

/** A stream event as its SSE payload: the chunk itself, or `{"error": {...}}` for a failure after the stream began. */
export function chatEventData(event: ChatStreamEvent): unknown {
  if (event.type === 'chunk') return withParameterAlias(event.chunk);
  return { error: { message: event.error.message, code: event.error.code, status: errorStatus(event.error) } };
}

export const chatRoutes: Route[] = [
  {
    method: 'POST',
    path: '/chat/completions',
    access: 'account',
    // Its own limit: one image sent inline as base64 is already larger than the JSON limit of the other routes.
    bodyLimit: (config) => config.http.maxChatBodyBytes,
    doc: {
      summary:
        'Chat completion, OpenAI-compatible. With `stream: true`: text/event-stream of chat.completion.chunk events, a last chunk with `choices: []` and `usage`, then `data: [DONE]`. ' +
        '`Accept-Encoding: gzip, br` compresses the non-streaming body. Billed per token from the model’s pricing.',
      tags: ['Chat'],
      body: ChatCompletionInput,
      response: ChatCompletionWire,
    },
    async handler(call) {
      const outcome = await call.services.chat.create(call.auth, await call.json(), { signal: call.signal });
      // The x-ratelimit-* headers are the pipeline's, as on every limited route (rest/pipeline.ts).
      if (outcome.stream) return sse(outcome.session, chatEventData);
      const { completion, charge } = outcome.result;
      const answer = await compressJson(
        chatCompletionBody(completion),
        call.headers['accept-encoding'],
        balanceHeaders(charge),
      );
      return { status: 200, ...answer };
    },
  },
];
