import { ValidationError } from '../errors.ts';
import type { JsonObject } from '../providers/chat/chat-engine.ts';
import type { InputItem, ResponsesInput, ResponsesTool } from './responses.inputs.ts';

/*
 * A Responses request as the chat completion it is run as (src/chat/): items become chat messages (consecutive
 * function calls one assistant message with tool_calls, their outputs tool messages), instructions a system
 * message, function tools chat tools, max_output_tokens max_completion_tokens, text.format response_format.
 */

const itemError = (index: number, message: string) =>
  new ValidationError(`Invalid request: input.${index}: ${message}`, [{ path: ['input', index], message }]);

type Part = {
  type: string;
  text?: string;
  image_url?: string | { url: string; detail?: string };
  detail?: string;
  filename?: string;
  file_data?: string;
  file_id?: string;
};

function chatContent(content: string | readonly Part[]): string | JsonObject[] {
  if (typeof content === 'string') return content;
  return content.map((part): JsonObject => {
    if (part.type === 'input_image' || part.type === 'image_url') {
      const image = part.image_url!;
      const url = typeof image === 'string' ? image : image.url;
      const detail = typeof image === 'string' ? part.detail : (image.detail ?? part.detail);
      return { type: 'image_url', image_url: { url, ...(detail !== undefined && { detail }) } };
    }
    if (part.type === 'input_file') {
      const { filename, file_data, file_id } = part;
      const file = { filename, file_data, file_id };
      return { type: 'file', file: Object.fromEntries(Object.entries(file).filter(([, v]) => v !== undefined)) };
    }
    return { type: 'text', text: part.text ?? '' };
  });
}

/** Only text can be in system and assistant messages: image parts there are refused by the chat schema anyway. */
const textOnly = (content: string | JsonObject[]): string | JsonObject[] =>
  typeof content === 'string' ? content : content.filter((part) => part.type === 'text');

/** The chat messages of a request's input (without instructions and history). */
export function inputMessages(input: ResponsesInput['input']): JsonObject[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: JsonObject[] = [];
  input.forEach((item: InputItem, index) => {
    if (item.type === 'reasoning') return; // The model's earlier reasoning is not sent back to it.
    if (item.type === 'item_reference')
      throw itemError(index, 'item_reference is not supported; send the item itself, or use previous_response_id');
    if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls)) (last.tool_calls as JsonObject[]).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    if (item.type === 'function_call_output') {
      const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? null);
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: output });
      return;
    }
    const content = chatContent(item.content as string | Part[]);
    messages.push({ role: item.role, content: item.role === 'user' ? content : textOnly(content) });
  });
  if (messages.length === 0) throw itemError(0, 'The input has no message or function call output');
  return messages;
}

/** Function tools in the chat form; web_search turns web search on; other tool types are accepted and unused. */
export function chatTools(tools: readonly ResponsesTool[] | null | undefined): {
  tools: JsonObject[] | undefined;
  webSearch: boolean;
} {
  const functions: JsonObject[] = [];
  let webSearch = false;
  for (const tool of tools ?? []) {
    if (tool.type === 'function') {
      const fields = ('function' in tool ? tool.function : tool) as {
        name: string;
        description?: string;
        parameters?: unknown;
        strict?: boolean | null;
      };
      functions.push({
        type: 'function',
        function: {
          name: fields.name,
          ...(fields.description !== undefined && { description: fields.description }),
          ...(fields.parameters !== undefined && { parameters: fields.parameters as JsonObject }),
          ...(typeof fields.strict === 'boolean' && { strict: fields.strict }),
        },
      });
    } else if (tool.type === 'web_search' || tool.type === 'web_search_preview') webSearch = true;
  }
  return { tools: functions.length > 0 ? functions : undefined, webSearch };
}

/** The chat completion body of a request; `history` is the stored conversation of previous_response_id. */
export function chatBody(input: ResponsesInput, history: readonly JsonObject[], messages: readonly JsonObject[]) {
  const { tools, webSearch } = chatTools(input.tools);
  const choice = input.tool_choice;
  const toolChoice =
    typeof choice === 'object' && choice !== null
      ? { type: 'function', function: { name: 'name' in choice ? choice.name : choice.function.name } }
      : (choice ?? undefined);
  const format = input.text?.format;
  const parameters = { ...input.venice_parameters, ...input.service_parameters };
  if (webSearch || input.web_search === true) parameters.enable_web_search ??= 'on';
  return {
    model: input.model,
    messages: [
      ...(input.instructions ? [{ role: 'system', content: input.instructions }] : []),
      ...history,
      ...messages,
    ],
    ...(tools && { tools }),
    ...(toolChoice !== undefined && { tool_choice: toolChoice }),
    ...(input.parallel_tool_calls != null && { parallel_tool_calls: input.parallel_tool_calls }),
    ...(input.max_output_tokens != null && { max_completion_tokens: input.max_output_tokens }),
    ...(input.temperature != null && { temperature: input.temperature }),
    ...(input.top_p != null && { top_p: input.top_p }),
    ...(input.reasoning?.effort != null && { reasoning_effort: input.reasoning.effort }),
    ...(format && format.type !== 'text' && { response_format: responseFormat(format) }),
    ...(Object.keys(parameters).length > 0 && { venice_parameters: parameters }),
    stream: input.stream === true,
  };
}

/** Responses' flat `{type: json_schema, name, schema, strict}` as chat's nested `json_schema` object. */
function responseFormat(format: { type: string } & Record<string, unknown>): JsonObject {
  if (format.type !== 'json_schema') return format as JsonObject;
  const { type: _type, ...schema } = format;
  return { type: 'json_schema', json_schema: schema as JsonObject };
}
