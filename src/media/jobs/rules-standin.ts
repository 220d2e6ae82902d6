import { z } from 'zod';
import type { Price } from '../../billing/billing.types.ts';
import { parseNano } from '../../billing/money.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import type { AudioJobRequest, VideoJobRequest } from '../../providers/jobs/job-engine.ts';
import { parseInput } from '../../validation.ts';

/*
 * A temporary stand-in for the per-model rules and prices (parseAudioJob … quoteVideo), used until the real
 * module lands; it knows only the built-in simulator models' shapes.
 */

const AudioBody = z.object({
  model: z.string(),
  prompt: z.string().min(1).max(10_000),
  lyrics_prompt: z.string().optional(),
  duration_seconds: z.coerce.number().int().positive().max(600).optional(),
  force_instrumental: z.boolean().optional(),
});

const VideoBody = z.object({
  model: z.string(),
  prompt: z.string().min(1).max(10_000),
  duration: z.string().regex(/^\d+s$/),
  aspect_ratio: z.string().optional(),
  resolution: z.string().optional(),
  audio: z.boolean().optional(),
  negative_prompt: z.string().max(10_000).optional(),
});

const AudioQuoteBody = z.object({ model: z.string(), duration_seconds: z.coerce.number().int().positive().optional() });
const VideoQuoteBody = z.object({
  model: z.string(),
  duration: z.string().regex(/^\d+s$/),
  resolution: z.string().optional(),
  audio: z.boolean().optional(),
});

export interface AudioQuote {
  readonly durationSeconds: number;
}
export interface VideoQuote {
  readonly durationSeconds: number;
  readonly resolution?: string | undefined;
  readonly audio: boolean;
}

const defaultDuration = (model: CatalogModel): number => Number(model.spec.default_duration ?? 30);

export function parseAudioJob(model: CatalogModel, input: unknown): AudioJobRequest {
  const body = parseInput(AudioBody, input);
  return {
    kind: 'audio',
    prompt: body.prompt,
    lyrics: body.lyrics_prompt,
    durationSeconds: body.duration_seconds ?? defaultDuration(model),
    forceInstrumental: body.force_instrumental ?? false,
    format: model.spec.default_format === 'wav' ? 'wav' : 'mp3',
  };
}

const HEIGHTS: Record<string, number> = { '480p': 480, '720p': 720 };

export function parseVideoJob(model: CatalogModel, input: unknown): VideoJobRequest {
  const body = parseInput(VideoBody, input);
  const height = HEIGHTS[body.resolution ?? '480p'] ?? 480;
  const [w, h] = (body.aspect_ratio ?? '16:9').split(':').map(Number);
  const width = Math.round((height * (w ?? 16)) / (h ?? 9) / 2) * 2;
  return {
    kind: 'video',
    prompt: body.prompt,
    negativePrompt: body.negative_prompt,
    durationSeconds: Number(body.duration.slice(0, -1)),
    width,
    height,
    aspectRatio: body.aspect_ratio,
    resolution: body.resolution ?? '480p',
    audio: body.audio ?? true,
    inputs: [],
  };
}

export function parseAudioQuote(model: CatalogModel, input: unknown): AudioQuote {
  const body = parseInput(AudioQuoteBody, input);
  return { durationSeconds: body.duration_seconds ?? defaultDuration(model) };
}

export function parseVideoQuote(_model: CatalogModel, input: unknown): VideoQuote {
  const body = parseInput(VideoQuoteBody, input);
  return {
    durationSeconds: Number(body.duration.slice(0, -1)),
    resolution: body.resolution,
    audio: body.audio ?? true,
  };
}

interface Usd {
  usd: number;
}

export function quoteAudio(model: CatalogModel, parsed: AudioQuote): Price {
  const tiers = (model.spec.pricing.durations ?? {}) as Record<string, Usd & { max_seconds: number }>;
  const tier = Object.values(tiers).find((t) => parsed.durationSeconds <= t.max_seconds) ?? Object.values(tiers).at(-1);
  const usd = parseNano(String(tier?.usd ?? 0));
  return { usd, diem: usd };
}

export function quoteVideo(model: CatalogModel, parsed: VideoQuote): Price {
  const pricing = model.spec.pricing as {
    per_second?: Usd;
    resolution_multipliers?: Record<string, number>;
    audio_multiplier?: number;
  };
  const multiplier =
    (pricing.resolution_multipliers?.[parsed.resolution ?? '480p'] ?? 1) *
    (parsed.audio ? (pricing.audio_multiplier ?? 1) : 1);
  const usd = parseNano((pricing.per_second?.usd ?? 0) * parsed.durationSeconds * multiplier);
  return { usd, diem: usd };
}
