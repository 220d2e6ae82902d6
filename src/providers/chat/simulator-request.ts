import { clip, ValidationError } from '../../errors.ts';
import { countTexts } from '../../token-count-pool.ts';
import type { UpstreamChatRequest } from './chat-engine.ts';
import type { Rng } from './simulator-text.ts';

/* What the simulator reads from a chat request: message text, prompt size, tools, output format, stops, limits. */

/** The text of a message's content: a string, or the text parts of a content array. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      part && typeof part === 'object' && (part as { type?: unknown }).type === 'text'
        ? String((part as { text?: unknown }).text ?? '')
        : '',
    )
    .filter(Boolean)
    .join('\n');
}

const MEDIA_PARTS = new Set(['image_url', 'input_audio', 'video_url']);

/** Media parts (image, audio, video) count as a fixed 85 tokens each, like OpenAI's low-detail images. */
function mediaPartsOf(content: unknown): number {
  return Array.isArray(content)
    ? content.filter(
        (part) => part && typeof part === 'object' && MEDIA_PARTS.has(String((part as { type?: unknown }).type)),
      ).length
    : 0;
}

/** Long prompts are counted off the event loop: the simulator runs in the server's process. */
export async function promptTokens(request: UpstreamChatRequest): Promise<number> {
  let total = 3;
  const texts: string[] = [];
  for (const message of request.messages) {
    total += 4 + 85 * mediaPartsOf(message.content);
    texts.push(textOf(message.content));
    if (Array.isArray(message.tool_calls)) texts.push(JSON.stringify(message.tool_calls));
  }
  if (Array.isArray(request.tools) && request.tools.length > 0) texts.push(JSON.stringify(request.tools));
  return total + (await countTexts(texts));
}

export interface FunctionTool {
  name: string;
  parameters: unknown;
}

export function functionTools(request: UpstreamChatRequest): FunctionTool[] {
  if (!Array.isArray(request.tools)) return [];
  return request.tools.flatMap((tool) => {
    const fn = (tool as { function?: { name?: unknown; parameters?: unknown } } | null)?.function;
    return fn && typeof fn.name === 'string'
      ? [{ name: fn.name, parameters: fn.parameters ?? { type: 'object', properties: {} } }]
      : [];
  });
}

/** Which tool to call: forced by tool_choice, or with `auto` when the user's message names a tool. */
export function toolToCall(
  request: UpstreamChatRequest,
  tools: FunctionTool[],
  lastUserText: string,
  lastRole: unknown,
  rng: Rng,
): FunctionTool | undefined {
  if (tools.length === 0) return undefined;
  const choice = request.tool_choice;
  if (choice === 'none') return undefined;
  if (choice && typeof choice === 'object') {
    const name = (choice as { function?: { name?: unknown } }).function?.name;
    const tool = tools.find((candidate) => candidate.name === name);
    if (!tool)
      throw new ValidationError(`tool_choice names the function "${clip(String(name))}", which is not in tools`);
    return tool;
  }
  if (choice === 'required') return rng.pick(tools);
  // auto: answer a tool result in text; call a tool the user's message mentions by name.
  if (lastRole === 'tool') return undefined;
  const said = lastUserText.toLowerCase();
  return tools.find(
    (tool) => said.includes(tool.name.toLowerCase()) || said.includes(tool.name.toLowerCase().replaceAll('_', ' ')),
  );
}

export function responseSchema(
  request: UpstreamChatRequest,
): { kind: 'schema'; schema: unknown } | { kind: 'object' } | undefined {
  const format = request.response_format as { type?: unknown; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === 'json_schema')
    return { kind: 'schema', schema: format.json_schema?.schema ?? { type: 'object' } };
  if (format?.type === 'json_object') return { kind: 'object' };
  return undefined;
}

export function stopStrings(request: UpstreamChatRequest): string[] {
  const stop = request.stop;
  if (typeof stop === 'string') return stop ? [stop] : [];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string' && s.length > 0) : [];
}

export function maxTokensOf(request: UpstreamChatRequest): number | undefined {
  for (const value of [request.max_completion_tokens, request.max_tokens]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}
