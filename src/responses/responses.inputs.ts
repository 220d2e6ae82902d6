import { z } from 'zod';
import { storedString } from '../validation.ts';

/*
 * POST /responses (docs/api.md, Responses): OpenAI's Responses API request, open as the original service's is
 * (unknown fields are ignored). Items and tools take both OpenAI's flat form and the nested chat form.
 */

const TextPart = z.looseObject({ type: z.enum(['input_text', 'output_text', 'text']), text: z.string() });
const ImageUrl = z.union([z.string().min(1), z.looseObject({ url: z.string().min(1), detail: z.string().optional() })]);
const ImagePart = z.looseObject({
  type: z.enum(['input_image', 'image_url']),
  image_url: ImageUrl,
  detail: z.string().optional(),
});
/** OpenAI's input_file: its text is extracted and read as text, as chat's file part (src/chat/chat-files.ts). */
const FilePart = z.looseObject({
  type: z.literal('input_file'),
  filename: z.string().optional(),
  file_data: z.string().optional(),
  file_id: z.string().optional(),
});
const ContentPart = z.union([TextPart, ImagePart, FilePart], {
  error: 'Each part must be input_text / output_text {text}, input_image {image_url} or input_file {file_data}',
});

export const MessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(ContentPart)]),
});
export const FunctionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
export const FunctionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.unknown(),
});
const ReasoningItem = z.looseObject({ type: z.literal('reasoning') });
const ItemReference = z.looseObject({ type: z.literal('item_reference'), id: z.string().min(1) });

export const InputItem = z.union(
  [MessageItem, FunctionCallItem, FunctionCallOutputItem, ReasoningItem, ItemReference],
  {
    error:
      'Each item must be a message {role, content}, function_call, function_call_output, reasoning or item_reference',
  },
);
export type InputItem = z.output<typeof InputItem>;

const FunctionFields = {
  name: z.string().min(1).max(256),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
};
/** OpenAI's flat function tool, the nested chat form, or another tool type (web_search turns web search on). */
export const ResponsesTool = z.union([
  z.looseObject({ type: z.literal('function'), ...FunctionFields }),
  z.looseObject({ type: z.literal('function'), function: z.looseObject(FunctionFields) }),
  z.looseObject({
    type: z
      .string()
      .min(1)
      .refine((type) => type !== 'function', 'A function tool needs a name'),
  }),
]);
export type ResponsesTool = z.output<typeof ResponsesTool>;

const ToolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
]);

export const ResponsesInput = z.looseObject({
  model: storedString().trim().min(1).max(200),
  input: z.union([z.string().min(1), z.array(InputItem).min(1)]),
  instructions: z.string().nullish(),
  previous_response_id: z.string().min(1).max(100).nullish(),
  store: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  reasoning: z
    .looseObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
      summary: z.string().nullish(),
    })
    .nullish(),
  tools: z.array(ResponsesTool).max(128).nullish(),
  tool_choice: ToolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.looseObject({ format: z.looseObject({ type: z.string() }).nullish() }).nullish(),
  web_search: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  venice_parameters: z.record(z.string(), z.unknown()).nullish(),
  service_parameters: z.record(z.string(), z.unknown()).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
});
export type ResponsesInput = z.output<typeof ResponsesInput>;
