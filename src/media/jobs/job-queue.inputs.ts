import { z } from 'zod';
import { storedString } from '../../validation.ts';
import { WebhookUrl } from '../../webhooks/webhook.inputs.ts';

/*
 * The bodies of POST /audio/queue, /video/queue and their quotes (docs/api.md, Queued jobs), shared by REST and
 * GraphQL. These are the bounds every model shares; the per-model rules (src/media/jobs/job-rules.ts) read the
 * catalog record.
 */

export const AUDIO_PROMPT_MAX_CHARS = 10_000;
export const LYRICS_MAX_CHARS = 20_000;
export const VIDEO_PROMPT_MAX_CHARS = 10_000;
/** A video model's prompt limit when its constraints name none. */
export const VIDEO_PROMPT_DEFAULT_LIMIT = 2_500;
export const SPEED_MIN = 0.25;
export const SPEED_MAX = 4;
/** A data URL of a 50 MB video is about 67 MB of text; the body limit of the route decides first. */
const URL_MAX_CHARS = 100_000_000;

export const VIDEO_DURATIONS = [
  ...['2s', '3s', '4s', '5s', '6s', '7s', '8s', '9s', '10s', '11s', '12s', '13s', '14s', '15s', '16s'],
  ...['18s', '20s', '25s', '30s', '1 gen', 'Auto'],
] as const;
export const VIDEO_ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '9:16', '16:9', '21:9'] as const;
export const VIDEO_RESOLUTIONS = [
  ...['256p', '360p', '480p', '540p', '580p', '720p', '1080p', '1440p', '2160p', '4k', '2x', '4x', 'true_1080p'],
] as const;
export const UPSCALE_FACTORS = [1, 2, 4] as const;

/** Reference media counts: the contract's limits; an element's reference images (no published limit) Lagoon caps at 4. */
export const REFERENCE_LIMITS = {
  reference_image_urls: 9,
  reference_video_urls: 3,
  reference_audio_urls: 3,
  elements: 4,
  element_reference_image_urls: 4,
  scene_image_urls: 4,
} as const;

const chars = (text: string) => [...text].length;
const text = (max: number) => storedString().refine((value) => chars(value) <= max, `At most ${max} characters`);
const requiredText = (max: number) =>
  text(max).refine((value) => value.trim().length > 0, 'Required: at least 1 character');
const boolean = () => z.boolean({ error: 'Must be true or false' });
const modelId = z.string({ error: 'Required: a model id' }).min(1, 'Required: a model id').max(200);

/** A whole number of seconds, sent as a number or a numeric string ("30"). */
export const DurationSeconds = z
  .union([z.number(), z.string().regex(/^\s*\d+(\.\d+)?\s*$/, 'Must be a whole number of seconds')], {
    error: 'Must be a whole number of seconds',
  })
  .transform(Number)
  .pipe(z.number().int('Must be a whole number of seconds').positive('Must be greater than 0').max(86_400));

/** http(s) or a data URL; the fetch policy (public addresses, size and time caps) applies when it is fetched. */
export const MediaUrl = z
  .string({ error: 'Must be a URL or a data URL' })
  .max(URL_MAX_CHARS)
  .refine((value) => {
    if (value.startsWith('data:')) return /^data:[\w.+-]+\/[\w.+-]+(;[^,]*)?,/.test(value);
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'Must be an http(s) URL or a data URL');

const urls = (max: number) => z.array(MediaUrl, { error: 'Must be a list of URLs' }).max(max, `At most ${max}`);

/** A URL that also receives this job's job.completed / job.failed webhook (docs/operations.md, Webhooks). */
const webhookUrl = WebhookUrl.optional().describe(
  'Also send this job’s job.completed / job.failed webhook here (signed with the oldest endpoint’s secret).',
);

/** The job's own webhook_url of a body the schemas below have accepted. */
export const webhookUrlOf = (raw: unknown): string | undefined =>
  z.object({ webhook_url: webhookUrl }).safeParse(raw).data?.webhook_url;

export const AudioJobInput = z.object({
  model: modelId,
  webhook_url: webhookUrl,
  prompt: requiredText(AUDIO_PROMPT_MAX_CHARS).describe('What the track is about or how it sounds.'),
  lyrics_prompt: text(LYRICS_MAX_CHARS).optional().describe('Lyrics; models with supports_lyrics only.'),
  duration_seconds: DurationSeconds.optional().describe('Seconds; models exposing duration metadata only.'),
  force_instrumental: boolean().optional(),
  lyrics_optimizer: boolean().optional(),
  voice: z.string({ error: 'Must be a string' }).min(1).max(200).optional(),
  language_code: z
    .string({ error: 'Must be a string' })
    .regex(/^[a-z]{2}$/i, 'Must be an ISO 639-1 code such as en')
    .optional(),
  speed: z
    .number({ error: 'Must be a number' })
    .min(SPEED_MIN, `Must be ${SPEED_MIN} to ${SPEED_MAX}`)
    .max(SPEED_MAX, `Must be ${SPEED_MIN} to ${SPEED_MAX}`)
    .optional(),
});
export type AudioJobInput = z.output<typeof AudioJobInput>;

const Element = z.object({
  frontal_image_url: MediaUrl,
  reference_image_urls: urls(REFERENCE_LIMITS.element_reference_image_urls).default([]),
});

export const VideoJobInput = z.object({
  model: modelId,
  webhook_url: webhookUrl,
  // Both required except by the upscale model (src/media/jobs/video-rules.ts), which takes neither: it reads the
  // length of its video_url.
  prompt: requiredText(VIDEO_PROMPT_MAX_CHARS).optional().describe('Required except by the upscale model.'),
  duration: z
    .enum(VIDEO_DURATIONS, { error: `Must be one of: ${VIDEO_DURATIONS.join(', ')}` })
    .optional()
    .describe("Required except by the upscale model, which takes its video_url's length."),
  negative_prompt: text(VIDEO_PROMPT_MAX_CHARS).optional(),
  aspect_ratio: z.enum(VIDEO_ASPECT_RATIOS, { error: `Must be one of: ${VIDEO_ASPECT_RATIOS.join(', ')}` }).optional(),
  resolution: z.enum(VIDEO_RESOLUTIONS, { error: `Must be one of: ${VIDEO_RESOLUTIONS.join(', ')}` }).optional(),
  upscale_factor: z
    .union([z.literal(1), z.literal(2), z.literal(4)], { error: 'Must be 1, 2 or 4' })
    .optional()
    .describe('The upscale model only (default 2); replaces resolution.'),
  audio: boolean().optional().describe('Default true; only models with audio_configurable let a request change it.'),
  image_url: MediaUrl.optional(),
  end_image_url: MediaUrl.optional(),
  audio_url: MediaUrl.optional(),
  video_url: MediaUrl.optional(),
  reference_image_urls: urls(REFERENCE_LIMITS.reference_image_urls).optional(),
  reference_video_urls: urls(REFERENCE_LIMITS.reference_video_urls).optional(),
  reference_audio_urls: urls(REFERENCE_LIMITS.reference_audio_urls).optional(),
  elements: z
    .array(Element, { error: 'Must be a list of elements' })
    .max(REFERENCE_LIMITS.elements, `At most ${REFERENCE_LIMITS.elements}`)
    .optional(),
  scene_image_urls: urls(REFERENCE_LIMITS.scene_image_urls).optional(),
});
export type VideoJobInput = z.output<typeof VideoJobInput>;

export const AudioQuoteInput = z.object({
  model: modelId,
  duration_seconds: DurationSeconds.optional(),
  character_count: z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .nonnegative('Must be 0 or more')
    .max(10_000_000)
    .optional()
    .describe('Characters of prompt and lyrics, for models priced per thousand characters.'),
});
export type AudioQuoteInput = z.output<typeof AudioQuoteInput>;

export const VideoQuoteInput = VideoJobInput.pick({
  model: true,
  duration: true,
  aspect_ratio: true,
  resolution: true,
  upscale_factor: true,
  audio: true,
  video_url: true,
});
export type VideoQuoteInput = z.output<typeof VideoQuoteInput>;
