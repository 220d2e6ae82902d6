import type { JsonObject } from '../providers/chat/chat-engine.ts';
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

/** A video as an upper estimate (audio-visual encoders take a few hundred tokens per second of a short clip). */
export const VIDEO_TOKEN_ESTIMATE = 10_000;
/**
 * Audio encoders take ~25–50 tokens per second of sound; 8 per kB of the clip is at least that for anything encoded
 * at 64 kbit/s or more (MP3 and up; WAV far more), so the estimate stays an upper one.
 */
const AUDIO_TOKENS_PER_KB = 8;
const AUDIO_TOKEN_MINIMUM = 200;

function audioTokenEstimate(audio: unknown): number {
  const data = (audio as { data?: unknown } | null)?.data;
  const kilobytes = typeof data === 'string' ? (data.length * 3) / 4 / 1024 : 0;
  return Math.max(AUDIO_TOKEN_MINIMUM, Math.ceil(kilobytes * AUDIO_TOKENS_PER_KB));
}

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
        else if (part.type === 'input_audio') tokens += audioTokenEstimate(part.input_audio);
        else if (part.type === 'video_url') tokens += VIDEO_TOKEN_ESTIMATE;
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
