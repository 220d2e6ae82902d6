import type { ChatCompletionRequestBody } from '../../src/chat/chat.inputs.ts';
import { builder, type JsonObject } from '../builder.ts';

/*
 * The GraphQL input of chatCompletion / chatCompletionStream: the REST body in camelCase, with typed messages
 * and tools. It maps onto the REST body and the service validates it with the same zod schema (bounds and
 * messages of a ValidationError name the REST fields).
 */

const ChatRoleEnum = builder.enumType('ChatRole', {
  values: {
    SYSTEM: { value: 'system' },
    DEVELOPER: { value: 'developer' },
    USER: { value: 'user' },
    ASSISTANT: { value: 'assistant' },
    TOOL: { value: 'tool' },
  } as const,
});

const ReasoningEffortEnum = builder.enumType('ReasoningEffort', {
  values: {
    NONE: { value: 'none' },
    MINIMAL: { value: 'minimal' },
    LOW: { value: 'low' },
    MEDIUM: { value: 'medium' },
    HIGH: { value: 'high' },
    XHIGH: { value: 'xhigh' },
    MAX: { value: 'max' },
  } as const,
});

export const WebSearchModeEnum = builder.enumType('WebSearchMode', {
  values: { OFF: { value: 'off' }, ON: { value: 'on' }, AUTO: { value: 'auto' } } as const,
});

const ChatFilePartInput = builder.inputType('ChatFilePartInput', {
  description: 'A document whose text the model reads (as REST `{"type": "file", "file": {...}}`).',
  fields: (t) => ({
    filename: t.string({ description: 'Heads the extracted text.' }),
    fileData: t.string({
      required: true,
      description: 'A data:<mime type>;base64,… URL: PDF, DOCX, PPTX, XLSX or text, at most 25 MB.',
    }),
  }),
});

const ChatContentPartInput = builder.inputType('ChatContentPartInput', {
  description:
    'One part of a message: set `text`, `imageUrl` (an http(s) or data: URL; vision models only) or `file` (its ' +
    'text is extracted and sent as text; priced as one text parser request plus its tokens).',
  fields: (t) => ({ text: t.string(), imageUrl: t.string(), file: t.field({ type: ChatFilePartInput }) }),
});

const ChatToolCallInput = builder.inputType('ChatToolCallInput', {
  description: 'A tool call of an earlier assistant message.',
  fields: (t) => ({
    id: t.string({ required: true }),
    name: t.string({ required: true }),
    arguments: t.string({ required: true, description: 'JSON text.' }),
  }),
});

const ChatMessageInput = builder.inputType('ChatMessageInput', {
  fields: (t) => ({
    role: t.field({ type: ChatRoleEnum, required: true }),
    content: t.string({ description: 'Text content; or use `parts`.' }),
    parts: t.field({
      type: [ChatContentPartInput],
      description: 'Content parts (text, images and files) instead of `content`.',
    }),
    name: t.string(),
    toolCallId: t.string({ description: 'TOOL messages: the id of the call this answers.' }),
    toolCalls: t.field({ type: [ChatToolCallInput], description: 'ASSISTANT messages: the calls it made.' }),
  }),
});

const ChatToolInput = builder.inputType('ChatToolInput', {
  description: 'A function tool.',
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string(),
    parameters: t.field({ type: 'JSONObject', description: 'JSON Schema of the arguments.' }),
    strict: t.boolean(),
  }),
});

const ChatServiceParametersInput = builder.inputType('ChatServiceParametersInput', {
  description: 'REST `service_parameters`.',
  fields: (t) => ({
    characterSlug: t.string(),
    stripThinkingResponse: t.boolean(),
    disableThinking: t.boolean(),
    enableWebSearch: t.field({ type: WebSearchModeEnum }),
    enableWebCitations: t.boolean(),
    enableWebScraping: t.boolean(),
    includeSearchResultsInStream: t.boolean(),
    returnSearchResultsAsDocuments: t.boolean(),
    includeSystemPrompt: t.boolean({
      description: 'The operator’s system prompt (REST `include_venice_system_prompt`); default true.',
    }),
    enableXSearch: t.boolean(),
  }),
});

export const ChatCompletionInputRef = builder.inputType('ChatCompletionInput', {
  fields: (t) => ({
    model: t.string({
      required: true,
      description: 'A text model id, trait or compatibility name, optionally with a `:key=value&…` feature suffix.',
    }),
    messages: t.field({ type: [ChatMessageInput], required: true }),
    temperature: t.float(),
    topP: t.float(),
    topK: t.int(),
    minP: t.float(),
    frequencyPenalty: t.float(),
    presencePenalty: t.float(),
    repetitionPenalty: t.float(),
    maxCompletionTokens: t.int(),
    n: t.int(),
    seed: t.int(),
    stop: t.stringList({ description: 'Up to 4 stop sequences.' }),
    logprobs: t.boolean(),
    topLogprobs: t.int(),
    reasoningEffort: t.field({ type: ReasoningEffortEnum }),
    tools: t.field({ type: [ChatToolInput] }),
    toolChoice: t.field({
      type: 'JSON',
      description: '"none", "auto", "required" or {"type": "function", "function": {"name"}}.',
    }),
    parallelToolCalls: t.boolean(),
    responseFormat: t.field({
      type: 'JSON',
      description:
        '{"type": "text" | "json_object"} or {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}.',
    }),
    serviceParameters: t.field({ type: ChatServiceParametersInput }),
  }),
});

type Input = typeof ChatCompletionInputRef.$inferInput;

/** Drops null and undefined values (GraphQL's "not given"), so the zod defaults apply. */
const defined = (record: Record<string, unknown>): JsonObject =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined));

/** The REST body of a GraphQL input. */
export function toRequestBody(input: Input): ChatCompletionRequestBody {
  const messages = input.messages.map((message) =>
    defined({
      role: message.role,
      content: message.parts
        ? message.parts.map((part) => {
            if (part.file)
              return {
                type: 'file',
                file: defined({ filename: part.file.filename, file_data: part.file.fileData }),
              };
            return part.imageUrl
              ? { type: 'image_url', image_url: { url: part.imageUrl } }
              : { type: 'text', text: part.text ?? '' };
          })
        : message.content,
      name: message.name,
      tool_call_id: message.toolCallId,
      tool_calls: message.toolCalls?.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    }),
  );
  const parameters = input.serviceParameters;
  return defined({
    model: input.model,
    messages,
    temperature: input.temperature,
    top_p: input.topP,
    top_k: input.topK,
    min_p: input.minP,
    frequency_penalty: input.frequencyPenalty,
    presence_penalty: input.presencePenalty,
    repetition_penalty: input.repetitionPenalty,
    max_completion_tokens: input.maxCompletionTokens,
    n: input.n,
    seed: input.seed,
    stop: input.stop,
    logprobs: input.logprobs,
    top_logprobs: input.topLogprobs,
    reasoning_effort: input.reasoningEffort,
    tools: input.tools?.map((tool) => ({
      type: 'function',
      function: defined({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        strict: tool.strict,
      }),
    })),
    tool_choice: input.toolChoice,
    parallel_tool_calls: input.parallelToolCalls,
    response_format: input.responseFormat,
    service_parameters: parameters
      ? defined({
          character_slug: parameters.characterSlug,
          strip_thinking_response: parameters.stripThinkingResponse,
          disable_thinking: parameters.disableThinking,
          enable_web_search: parameters.enableWebSearch,
          enable_web_citations: parameters.enableWebCitations,
          enable_web_scraping: parameters.enableWebScraping,
          include_search_results_in_stream: parameters.includeSearchResultsInStream,
          return_search_results_as_documents: parameters.returnSearchResultsAsDocuments,
          include_venice_system_prompt: parameters.includeSystemPrompt,
          enable_x_search: parameters.enableXSearch,
        })
      : undefined,
  }) as ChatCompletionRequestBody;
}
