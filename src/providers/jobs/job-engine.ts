/**
 * Queued media (music/audio and video jobs): one interface, one adapter per engine (the built-in simulator, which
 * renders real media with ffmpeg; a generic queue API that is submitted to, polled and fetched from). Adapters
 * only make media; per-model rules, quotes, the job table, the queue and the money belong to the job service, so
 * every engine's job is reserved, retried, charged and stored alike.
 */

import { UpstreamError } from '../../errors.ts';

export type JobKind = 'audio' | 'video';

/** The engine refused the job (an upstream 4xx): no retry changes that, so the job is FAILED at once. */
export class JobRefusedError extends UpstreamError {
  constructor(message: string) {
    super(message, 'UPSTREAM_ERROR');
  }
}

/** A validated job as the rules (src/media/jobs) normalise it; what the engine needs and nothing else. */
export interface AudioJobRequest {
  readonly kind: 'audio';
  readonly prompt: string;
  readonly lyrics?: string | undefined;
  readonly durationSeconds: number;
  readonly forceInstrumental: boolean;
  readonly voice?: string | undefined;
  readonly languageCode?: string | undefined;
  readonly speed?: number | undefined;
  /** The container/codec the engine should produce (catalog `default_format` unless asked otherwise). */
  readonly format: 'mp3' | 'wav' | 'flac';
}

export interface VideoJobRequest {
  readonly kind: 'video';
  readonly prompt: string;
  readonly negativePrompt?: string | undefined;
  readonly durationSeconds: number;
  /** The `duration` the caller chose ("5s", "Auto", "1 gen"): the key of a `durations` price table. */
  readonly duration?: string | undefined;
  readonly width: number;
  readonly height: number;
  readonly aspectRatio?: string | undefined;
  readonly resolution?: string | undefined;
  readonly audio: boolean;
  readonly upscaleFactor?: number | undefined;
  /** Remote inputs already fetched under the public-address policy, with their probed facts. */
  readonly inputs: readonly JobInput[];
}

export type JobInputRole =
  | 'image'
  | 'end_image'
  | 'audio'
  | 'video'
  | 'reference_image'
  | 'reference_video'
  | 'reference_audio'
  /** `elements[n].frontal_image_url` and `elements[n].reference_image_urls` (cited as @Element<n>). */
  | 'element_frontal_image'
  | 'element_reference_image'
  /** `scene_image_urls` (cited as @Image<n>). */
  | 'scene_image';

export interface JobInput {
  readonly role: JobInputRole;
  /** Element images (`@Element<n>`): which element, from 1. */
  readonly element?: number | undefined;
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly durationSeconds?: number | undefined;
}

export type JobRequest = AudioJobRequest | VideoJobRequest;

export interface JobRunContext {
  readonly signal: AbortSignal;
  /** 0–100, where the engine knows it. */
  progress(percent: number): void;
}

export type JobResult =
  | { readonly kind: 'media'; readonly bytes: Buffer; readonly contentType: string }
  /** The engine keeps the file: a URL valid for a day that the caller downloads from. */
  | { readonly kind: 'download'; readonly url: string; readonly contentType: string };

export interface JobEngine {
  readonly id: string;
  readonly simulated: boolean;
  /** Runs the job to its end. Throws UpstreamError for faults worth a retry, JobRefusedError or ValidationError for refusals. */
  run(upstreamModel: string, request: JobRequest, context: JobRunContext): Promise<JobResult>;
  close?(): Promise<void>;
}
