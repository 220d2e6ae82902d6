import { z } from 'zod';
import { storedString } from '../../validation.ts';

/** The largest audio file accepted (OpenAI's and the original service's limit). */
export const TRANSCRIPTION_MAX_BYTES = 25 * 1024 * 1024;

export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

const flag = z.enum(['true', 'false']).transform((value) => value === 'true');

/** The text fields of POST /audio/transcriptions (multipart, so every value arrives as a string). */
export const TranscriptionFields = z.strictObject({
  model: storedString()
    .min(1)
    .max(200)
    .optional()
    .describe('An asr model id, trait or compatibility name (whisper-1); default: the default asr model'),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'Must be an ISO 639-1 code such as en')
    .optional()
    .describe('ISO 639-1 hint; auto-detected when absent'),
  prompt: z.string().max(4_000).optional().describe('Text that guides the style or spelling (upstream engines)'),
  response_format: z.enum(TRANSCRIPT_FORMATS).default('json').describe('json (default), text, srt, verbose_json, vtt'),
  temperature: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'Must be a number from 0 to 1')
    .transform(Number)
    .refine((value) => value <= 1, 'Must be a number from 0 to 1')
    .optional(),
  timestamps: flag.optional().describe('Include word and segment timestamps in json (the original service)'),
  'timestamp_granularities[]': z.enum(['word', 'segment']).optional(),
  timestamp_granularities: z.enum(['word', 'segment']).optional(),
  stream: z.literal('false').optional(),
});
export type TranscriptionFields = z.output<typeof TranscriptionFields>;
