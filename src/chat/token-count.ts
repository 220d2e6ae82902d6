import type { JsonObject } from '../providers/chat/chat-provider.ts';
import { countTexts } from '../token-count-pool.ts';

/*
 * Token counts with OpenAI's o200k_base encoding (gpt-tokenizer). Upstream models use their own tokenizers, so
 * these are estimates: they size the reservation (with a margin) and settle a call whose upstream reported no
 * usage, or that ended before its usage arrived. Prompts can be as long as the JSON body limit: long ones are
 * counted off the event loop (src/token-count-pool.ts).
 */

/** Chat-template overhead per message (role markers and separators), as OpenAI counts it. */
const TOKENS_PER_MESSAGE = 4;
/** What one image costs in prompt tokens, as an upper estimate (vision encoders use a few hundred to ~1,500). */
export const IMAGE_TOKEN_ESTIMATE = 1_500;

/** Prompt tokens of an upstream request body: messages (text parts and images), tools and the response schema. */
export async function countPromptTokens(body: {
  messages: readonly JsonObject[];
  tools?: unknown;
  response_format?: unknown;
}): Promise<number> {
  let tokens = 3; // the assistant reply's priming
  const texts: string[] = [];
  for (const message of body.messages) {
    tokens += TOKENS_PER_MESSAGE;
    const content = message.content;
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      for (const part of content as JsonObject[]) {
        if (part.type === 'image_url') tokens += IMAGE_TOKEN_ESTIMATE;
        else if (typeof part.text === 'string') texts.push(part.text);
      }
    }
    if (typeof message.name === 'string') texts.push(message.name);
    if (Array.isArray(message.tool_calls)) texts.push(JSON.stringify(message.tool_calls));
  }
  if (body.tools !== undefined) texts.push(JSON.stringify(body.tools));
  if (body.response_format !== undefined) texts.push(JSON.stringify(body.response_format));
  return tokens + (await countTexts(texts));
}

/** The tokens of the texts together (a stream's received output, a completion's choices). */
export const countOutputTokens = (texts: Iterable<string>): Promise<number> => countTexts([...texts]);
