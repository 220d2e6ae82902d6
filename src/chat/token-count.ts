import type { JsonObject } from '../providers/chat/chat-provider.ts';
import { countTextTokens } from '../tokenizer.ts';

/*
 * Token counts with OpenAI's o200k_base encoding (gpt-tokenizer). Upstream models use their own tokenizers, so
 * these are estimates: they size the reservation (with a margin) and settle a call whose upstream reported no
 * usage, or that ended before its usage arrived.
 */

/** Chat-template overhead per message (role markers and separators), as OpenAI counts it. */
const TOKENS_PER_MESSAGE = 4;
/** What one image costs in prompt tokens, as an upper estimate (vision encoders use a few hundred to ~1,500). */
export const IMAGE_TOKEN_ESTIMATE = 1_500;

export { countTextTokens };

/** Prompt tokens of an upstream request body: messages (text parts and images), tools and the response schema. */
export function countPromptTokens(body: { messages: readonly JsonObject[]; tools?: unknown; response_format?: unknown }): number {
  let tokens = 3; // the assistant reply's priming
  for (const message of body.messages) {
    tokens += TOKENS_PER_MESSAGE;
    const content = message.content;
    if (typeof content === 'string') tokens += countTextTokens(content);
    else if (Array.isArray(content)) {
      for (const part of content as JsonObject[]) {
        if (part.type === 'image_url') tokens += IMAGE_TOKEN_ESTIMATE;
        else if (typeof part.text === 'string') tokens += countTextTokens(part.text);
      }
    }
    if (typeof message.name === 'string') tokens += countTextTokens(message.name);
    if (Array.isArray(message.tool_calls)) tokens += countTextTokens(JSON.stringify(message.tool_calls));
  }
  if (body.tools !== undefined) tokens += countTextTokens(JSON.stringify(body.tools));
  if (body.response_format !== undefined) tokens += countTextTokens(JSON.stringify(body.response_format));
  return tokens;
}
