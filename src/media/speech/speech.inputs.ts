import { z } from 'zod';
import { storedString } from '../../validation.ts';

/** The response formats of POST /audio/speech. */
export const AUDIO_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

/** One speech request (REST POST /audio/speech and GraphQL synthesizeSpeech); model rules are checked after. */
export const SpeechInput = z.object({
  input: z.string().min(1).max(4096).describe('The text to speak; 1 to 4096 characters'),
  model: storedString()
    .min(1)
    .max(200)
    .optional()
    .describe('A tts model id, trait or compatibility name (tts-1); default: the default tts model'),
  voice: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("One of the model's voices (default: its default_voice, else af_sky), or a cloned voice `vv_<id>`"),
  language: z
    .string()
    .min(2)
    .max(32)
    .optional()
    .describe('An ISO 639-1 code or a language name; languages the model does not know are ignored'),
  prompt: z
    .string()
    .max(500)
    .optional()
    .describe('Style prompt; used by models with supportsPromptParam, ignored by the others'),
  response_format: z.enum(AUDIO_FORMATS).optional().describe('mp3 (default), opus, aac, flac, wav, pcm'),
  speed: z.number().min(0.25).max(4).default(1).describe('0.25 to 4; default 1'),
  streaming: z.boolean().default(false).describe('Stream the audio sentence by sentence (chunked transfer)'),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .optional()
    .describe('0 to 2; used by models with supportsTemperatureParam, ignored by the others'),
  top_p: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('0 to 1; used by models with supportsTopPParam, ignored by the others'),
});
export type SpeechInput = z.output<typeof SpeechInput>;

/** POST /audio/voices (besides the sample file) and GraphQL cloneVoice. */
export const CloneVoiceInput = z.object({
  model: storedString()
    .min(1)
    .max(200)
    .optional()
    .describe('The tts model the voice is for (it can be used with this model only); default: the default tts model'),
});

/** GraphQL voices(model) and the query of GET /audio/voices. */
export const VoicesQueryInput = CloneVoiceInput;
