import { z } from 'zod';
import { storedString } from '../validation.ts';

/*
 * The body of POST /chat/completions (OpenAI-compatible), shared by REST and GraphQL. Every field clients may
 * lists is validated with its bounds; the fields it marks "accepted" (user, store, text, include, metadata,
 * prompt_cache_*) are accepted and not forwarded. Unknown top-level fields are dropped silently, as OpenAI-style
 * clients send extras. `null` counts as absent for optional fields (many clients send explicit nulls).
 */

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
export const WEB_SEARCH_MODES = ['off', 'on', 'auto'] as const;
export type WebSearchMode = (typeof WEB_SEARCH_MODES)[number];
export const MAX_STOP_SEQUENCES = 4;
/** OpenAI's own bound on `n`; more choices than this is a mistake, not a use. */
export const MAX_CHOICES = 128;

/** The object without its `null`-valued keys (the same object when it has none); anything else unchanged. */
function withoutNulls(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    if ((value as Record<string, unknown>)[key] !== null) continue;
    copy ??= { ...(value as Record<string, unknown>) };
    delete copy[key];
  }
  return copy ?? value;
}
/**
 * An object whose `null` fields count as absent: the nulls are dropped once for the whole object, so its fields
 * are plain optional schemas (one preprocess per field would cost an allocation per field per request).
 */
const nullableFields = <T extends z.ZodType>(schema: T) => z.preprocess(withoutNulls, schema);
/** Optional (inside `nullableFields`, where `null` has already become absent). */
const opt = <T extends z.ZodType>(schema: T) => schema.optional();

const between = (min: number, max: number) =>
  z.number().min(min, `Must be between ${min} and ${max}`).max(max, `Must be between ${min} and ${max}`);
const wholeNumber = () => z.number().int('Must be a whole number');

const TextPart = z.object({ type: z.literal('text'), text: z.string() });
const ImagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.union([
    z
      .string()
      .min(1)
      .transform((url) => ({ url })),
    nullableFields(
      z.object({
        url: z.string().min(1, 'Required: an http(s) or data: URL'),
        detail: opt(z.enum(['auto', 'low', 'high'])),
      }),
    ),
  ]),
});
/** OpenAI's audio part: the clip itself, base64, with its format (wav, mp3, ...). */
const AudioPart = z.object({
  type: z.literal('input_audio'),
  input_audio: z.object({
    data: z.string().min(1, 'Required: the audio as base64'),
    format: z.string().min(1, 'Required: the audio format, e.g. wav or mp3').max(10),
  }),
});
/** A video by URL (http(s) or data:), shaped like an image part. */
const VideoPart = z.object({
  type: z.literal('video_url'),
  video_url: z.union([
    z
      .string()
      .min(1)
      .transform((url) => ({ url })),
    z.object({ url: z.string().min(1, 'Required: an http(s) or data: URL') }),
  ]),
});
/** OpenAI's file part; its text is extracted and sent on as text (src/chat/chat-files.ts). */
const FilePart = z.object({
  type: z.literal('file'),
  file: nullableFields(
    z
      .object({
        filename: opt(z.string().max(255, 'At most 255 characters')),
        file_data: opt(z.string()),
        file_id: opt(z.string()),
      })
      .superRefine((file, ctx) => {
        if (file.file_id !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['file_id'],
            message: 'file_id is not supported (there is no files API): send the file inline as file_data',
          });
        else if (file.file_data === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['file_data'],
            message: 'Required: the file as a data:<mime type>;base64,<data> URL',
          });
      }),
  ),
});
export type ChatTextPart = z.output<typeof TextPart>;
export type ChatImagePart = z.output<typeof ImagePart>;
export type ChatAudioPart = z.output<typeof AudioPart>;
export type ChatVideoPart = z.output<typeof VideoPart>;
export type ChatFilePart = z.output<typeof FilePart>;
export type ChatUserPart = ChatTextPart | ChatImagePart | ChatAudioPart | ChatVideoPart | ChatFilePart;

const contentPartError = {
  error:
    'Each content part must be {"type": "text", "text"}, {"type": "image_url", "image_url": {"url"}}, ' +
    '{"type": "input_audio", "input_audio": {"data", "format"}}, {"type": "video_url", "video_url": {"url"}} or ' +
    '{"type": "file", "file": {"filename", "file_data"}}',
};
const UserPart = z.discriminatedUnion('type', [TextPart, ImagePart, AudioPart, VideoPart, FilePart], contentPartError);
const TextOnlyPart = z.discriminatedUnion('type', [TextPart], {
  error: 'Only {"type": "text", "text"} parts are allowed in this message',
});

const TextContent = z.union([z.string(), z.array(TextOnlyPart)], {
  error: 'Must be a string or an array of text parts',
});
const UserContent = z.union([z.string(), z.array(UserPart).min(1, 'At least one content part')], {
  error: 'Must be a string or an array of content parts',
});

const ToolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});
export type ChatToolCallInput = z.output<typeof ToolCall>;

const name = opt(z.string().min(1).max(256));
const SystemMessage = z.object({ role: z.enum(['system', 'developer']), content: TextContent, name });
const UserMessage = z.object({ role: z.literal('user'), content: UserContent, name });
const AssistantMessage = z
  .object({
    role: z.literal('assistant'),
    content: opt(TextContent),
    name,
    tool_calls: opt(z.array(ToolCall)),
    reasoning_content: opt(z.string()),
  })
  .refine((message) => message.content !== undefined || (message.tool_calls?.length ?? 0) > 0, {
    message: 'An assistant message needs content or tool_calls',
    path: ['content'],
  });
const ToolMessage = z.object({
  role: z.literal('tool'),
  content: TextContent,
  tool_call_id: z.string().min(1, 'Required: the id of the tool call this answers'),
  name,
});

export const ChatMessageInput = nullableFields(
  z.discriminatedUnion('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage], {
    error: 'role must be one of: system, developer, user, assistant, tool',
  }),
);
export type ChatMessageInput = z.output<typeof ChatMessageInput>;

const FunctionTool = z.object({
  type: z.literal('function', { error: 'Only function tools are supported ({"type": "function", "function": {...}})' }),
  function: nullableFields(
    z.object({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Use 1 to 64 letters, digits, "_" or "-"'),
      description: opt(z.string()),
      parameters: opt(z.record(z.string(), z.unknown())),
      strict: opt(z.boolean()),
    }),
  ),
});
export type ChatToolInput = z.output<typeof FunctionTool>;

const ToolChoice = z.union(
  [
    z.enum(['none', 'auto', 'required']),
    z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
  ],
  { error: 'Must be "none", "auto", "required" or {"type": "function", "function": {"name"}}' },
);
export type ChatToolChoice = z.output<typeof ToolChoice>;

const JsonSchemaFormat = nullableFields(
  z
    .object({
      name: opt(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Use 1 to 64 letters, digits, "_" or "-"')),
      description: opt(z.string()),
      schema: opt(z.record(z.string(), z.unknown())),
      strict: opt(z.boolean()),
      // Some clients send json_schema as the JSON Schema itself: accept that form too.
      type: opt(z.unknown()),
      properties: opt(z.unknown()),
      required: opt(z.unknown()),
    })
    .loose()
    .transform(({ name: schemaName, description, schema, strict, ...rest }) => ({
      name: schemaName ?? 'response',
      ...(description !== undefined && { description }),
      schema: schema ?? (rest as Record<string, unknown>),
      ...(strict !== undefined && { strict }),
    })),
);

const ResponseFormat = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({ type: z.literal('json_schema'), json_schema: JsonSchemaFormat }),
  ],
  { error: 'type must be one of: text, json_object, json_schema' },
);
export type ChatResponseFormat = z.output<typeof ResponseFormat>;

/** `service_parameters` (alias `venice_parameters`, docs/api.md); unknown keys are ignored. */
const serviceParametersShape = {
  character_slug: opt(storedString().trim().min(1)),
  strip_thinking_response: opt(z.boolean()),
  disable_thinking: opt(z.boolean()),
  enable_e2ee: opt(z.boolean()),
  enable_web_search: opt(z.enum(WEB_SEARCH_MODES, { error: 'Must be one of: off, on, auto' })),
  enable_web_scraping: opt(z.boolean()),
  enable_web_citations: opt(z.boolean()),
  include_search_results_in_stream: opt(z.boolean()),
  return_search_results_as_documents: opt(z.boolean()),
  include_venice_system_prompt: opt(z.boolean()),
  enable_x_search: opt(z.boolean()),
};
export const ServiceParametersInput = nullableFields(z.object(serviceParametersShape));
export type ServiceParametersInput = z.output<typeof ServiceParametersInput>;
export const SERVICE_PARAMETER_KEYS = Object.keys(serviceParametersShape) as (keyof ServiceParametersInput)[];

const ChatCompletionBody = z
  .object({
    model: z.string().trim().min(1, 'Required: a model id, a trait or a compatibility name'),
    messages: z.array(ChatMessageInput, { error: 'Required: an array of messages' }).min(1, 'At least one message'),
    frequency_penalty: opt(between(-2, 2)),
    presence_penalty: opt(between(-2, 2)),
    repetition_penalty: opt(z.number().min(0, 'Must be at least 0')),
    temperature: opt(between(0, 2)),
    max_temp: opt(between(0, 2)),
    min_temp: opt(between(0, 2)),
    top_p: opt(between(0, 1)),
    min_p: opt(between(0, 1)),
    top_k: opt(wholeNumber().min(0, 'Must be at least 0')),
    seed: opt(wholeNumber().positive('Must be greater than 0').max(Number.MAX_SAFE_INTEGER)),
    n: opt(wholeNumber().min(1, 'Must be at least 1').max(MAX_CHOICES, `At most ${MAX_CHOICES}`)),
    stop: opt(
      z.union(
        [
          z.string().min(1),
          z.array(z.string().min(1)).max(MAX_STOP_SEQUENCES, `At most ${MAX_STOP_SEQUENCES} stop sequences`),
        ],
        {
          error: `Must be a string or an array of up to ${MAX_STOP_SEQUENCES} strings`,
        },
      ),
    ),
    stop_token_ids: opt(z.array(wholeNumber().min(0))),
    logprobs: opt(z.boolean()),
    top_logprobs: opt(wholeNumber().min(0, 'Must be at least 0')),
    max_completion_tokens: opt(wholeNumber().min(1, 'Must be at least 1')),
    // Deprecated; values of 0 or less are ignored, as OpenAI does.
    max_tokens: opt(wholeNumber()).transform((value) => (value !== undefined && value > 0 ? value : undefined)),
    reasoning: opt(
      nullableFields(
        z.object({
          effort: opt(z.enum(REASONING_EFFORTS, { error: `Must be one of: ${REASONING_EFFORTS.join(', ')}` })),
          summary: opt(z.string()),
        }),
      ),
    ),
    reasoning_effort: opt(z.enum(REASONING_EFFORTS, { error: `Must be one of: ${REASONING_EFFORTS.join(', ')}` })),
    stream: opt(z.boolean()).transform((value) => value ?? false),
    stream_options: opt(nullableFields(z.object({ include_usage: opt(z.boolean()) }))),
    tools: opt(z.array(FunctionTool)),
    tool_choice: opt(ToolChoice),
    parallel_tool_calls: opt(z.boolean()),
    response_format: opt(ResponseFormat),
    service_parameters: opt(ServiceParametersInput),
    venice_parameters: opt(ServiceParametersInput),
    // Accepted for compatibility, not forwarded.
    user: opt(z.string()),
    store: opt(z.boolean()),
    text: opt(nullableFields(z.object({ verbosity: opt(z.string()) }))),
    include: opt(z.array(z.string())),
    metadata: opt(z.record(z.string(), z.unknown())),
    prompt_cache_key: opt(z.string()),
    prompt_cache_retention: opt(
      z.enum(['default', 'extended', '24h'], { error: 'Must be one of: default, extended, 24h' }),
    ),
  })
  .transform(({ venice_parameters, service_parameters, reasoning, reasoning_effort, ...rest }) => ({
    ...rest,
    // reasoning_effort takes precedence over reasoning.effort; service_parameters over its alias.
    reasoning_effort: reasoning_effort ?? reasoning?.effort,
    service_parameters: { ...venice_parameters, ...service_parameters } as ServiceParametersInput,
  }));
export const ChatCompletionInput = nullableFields(ChatCompletionBody);
export type ChatCompletionInput = z.output<typeof ChatCompletionInput>;
export type ChatCompletionRequestBody = z.input<typeof ChatCompletionBody>;
