import type { CatalogModel } from '../../catalog/model.ts';
import { VideoConstraints } from '../../operator-config/model-spec-schema.ts';
import type { JobInput, JobInputRole, VideoJobRequest } from '../../providers/jobs/job-engine.ts';
import { parseInput } from '../../validation.ts';
import { fieldError, requireType } from './audio-rules.ts';
import {
  VIDEO_DURATIONS,
  VIDEO_PROMPT_DEFAULT_LIMIT,
  VideoJobInput,
  VideoQuoteInput,
  type VideoQuoteInput as QuoteBody,
} from './job-queue.inputs.ts';
import { durationSecondsOf, videoSize } from './video-size.ts';

/*
 * A video model's rules from its catalog constraints (docs/api.md, Queued jobs): durations, resolutions and aspect
 * ratios it lists (an empty list: the field is not taken, except durations, where empty means any), its prompt
 * limit, whether the request may switch audio, and its model_type: `video` is the upscale model (takes video_url
 * and upscale_factor instead of resolution; prompt and duration are optional, and without a duration the job lasts
 * as long as its video_url, read when it is fetched), `image-to-video` needs image_url.
 */

export interface VideoRules {
  readonly durations: readonly string[];
  readonly resolutions: readonly string[];
  readonly aspectRatios: readonly string[];
  readonly modelType: 'image-to-video' | 'text-to-video' | 'video';
  readonly upscale: boolean;
  readonly audio: boolean;
  readonly audioConfigurable: boolean;
  readonly promptCharacterLimit: number;
}

const DEFAULT_ASPECT_RATIO = '16:9';
const DEFAULT_RESOLUTION = '720p';
const DEFAULT_UPSCALE_FACTOR = 2;
const rulesCache = new WeakMap<CatalogModel, VideoRules>();

export function videoRules(model: CatalogModel): VideoRules {
  let rules = rulesCache.get(model);
  if (!rules) {
    // The config loader validated the constraints; a failed parse here means none were given.
    const parsed = VideoConstraints.safeParse(model.spec.constraints ?? {});
    const c = parsed.success ? parsed.data : {};
    const modelType = c.model_type ?? 'text-to-video';
    rules = {
      durations: c.durations ?? [],
      resolutions: c.resolutions ?? [],
      aspectRatios: c.aspect_ratios ?? [],
      modelType,
      upscale: modelType === 'video',
      audio: c.audio ?? true,
      audioConfigurable: c.audio_configurable ?? false,
      promptCharacterLimit: c.prompt_character_limit ?? VIDEO_PROMPT_DEFAULT_LIMIT,
    };
    rulesCache.set(model, rules);
  }
  return rules;
}

/** What a video price depends on; the output of a quote body and a subset of a job request. */
export interface VideoPriceBasis {
  readonly durationSeconds: number;
  readonly duration?: string | undefined;
  readonly resolution?: string | undefined;
  readonly audio: boolean;
  readonly upscaleFactor?: number | undefined;
}

export interface ParsedVideoShape extends VideoPriceBasis {
  readonly aspectRatio: string;
  readonly width: number;
  readonly height: number;
}

/** The duration a request names; undefined only for the upscale model, whose input video gives its length. */
function requestedDuration(rules: VideoRules, duration: string | undefined): string | undefined {
  if (duration === undefined) {
    if (rules.upscale) return undefined;
    const choices = rules.durations.length > 0 ? rules.durations : VIDEO_DURATIONS;
    throw fieldError('duration', `Required: one of ${choices.join(', ')}`);
  }
  if (rules.durations.length > 0 && !rules.durations.includes(duration))
    throw fieldError('duration', `must be one of: ${rules.durations.join(', ')} for this model`);
  return duration;
}

/**
 * The fields a quote and a job share, checked against the model. An upscale without a duration has
 * durationSeconds 0 until {@link withInputDuration} sets it from the fetched video.
 */
function checkShape(rules: VideoRules, body: QuoteBody): ParsedVideoShape {
  const duration = requestedDuration(rules, body.duration);
  const listed = (field: 'aspect_ratio' | 'resolution', value: string | undefined, list: readonly string[]) => {
    if (value === undefined || list.includes(value)) return;
    throw fieldError(
      field,
      list.length > 0 ? `must be one of: ${list.join(', ')} for this model` : `this model does not take ${field}`,
    );
  };
  listed('aspect_ratio', body.aspect_ratio, rules.aspectRatios);
  const aspectRatio = body.aspect_ratio ?? rules.aspectRatios[0] ?? DEFAULT_ASPECT_RATIO;
  let resolution: string | undefined;
  let upscaleFactor: number | undefined;
  if (rules.upscale) {
    if (body.resolution !== undefined) throw fieldError('resolution', 'the upscale model takes upscale_factor instead');
    upscaleFactor = body.upscale_factor ?? DEFAULT_UPSCALE_FACTOR;
    // `2x`/`4x` are resolution tiers too: the price's resolution_multipliers key an upscale by them.
    resolution = `${upscaleFactor}x`;
  } else {
    if (body.upscale_factor !== undefined) throw fieldError('upscale_factor', 'only the upscale model takes it');
    listed('resolution', body.resolution, rules.resolutions);
    resolution = body.resolution ?? rules.resolutions[0] ?? DEFAULT_RESOLUTION;
  }
  if (body.audio !== undefined && body.audio !== rules.audio && !rules.audioConfigurable)
    throw fieldError('audio', `this model always makes clips ${rules.audio ? 'with' : 'without'} sound`);
  const audio = rules.audioConfigurable ? (body.audio ?? true) : rules.audio;
  return {
    duration,
    durationSeconds: duration === undefined ? 0 : durationSecondsOf(duration),
    aspectRatio,
    resolution,
    ...(upscaleFactor !== undefined && { upscaleFactor }),
    audio,
    ...videoSize(resolution, aspectRatio, upscaleFactor),
  };
}

export interface RemoteInput {
  readonly role: JobInputRole;
  readonly url: string;
  /** Element images: which element (from 1), as the prompt cites it (@Element1). */
  readonly element?: number;
  /** The body field it came from, so a fetch or probe failure can name it (`elements[0].frontal_image_url`). */
  readonly field: string;
}

export interface ParsedVideoJob {
  readonly request: Omit<VideoJobRequest, 'inputs'>;
  readonly remote: RemoteInput[];
  /** An upscale without a duration: its length (and so its price) is known once video_url is fetched. */
  readonly durationFromInput: boolean;
}

function remoteInputs(body: VideoJobInput): RemoteInput[] {
  const remote: RemoteInput[] = [];
  const one = (role: JobInputRole, field: string, url: string | undefined) => {
    if (url !== undefined) remote.push({ role, url, field });
  };
  const many = (role: JobInputRole, field: string, urls: readonly string[] | undefined) =>
    urls?.forEach((url, i) => remote.push({ role, url, field: `${field}[${i}]` }));
  one('image', 'image_url', body.image_url);
  one('end_image', 'end_image_url', body.end_image_url);
  one('audio', 'audio_url', body.audio_url);
  one('video', 'video_url', body.video_url);
  many('reference_image', 'reference_image_urls', body.reference_image_urls);
  many('reference_video', 'reference_video_urls', body.reference_video_urls);
  many('reference_audio', 'reference_audio_urls', body.reference_audio_urls);
  body.elements?.forEach((element, i) => {
    const field = `elements[${i}]`;
    remote.push({
      role: 'element_frontal_image',
      url: element.frontal_image_url,
      element: i + 1,
      field: `${field}.frontal_image_url`,
    });
    element.reference_image_urls.forEach((url, j) =>
      remote.push({
        role: 'element_reference_image',
        url,
        element: i + 1,
        field: `${field}.reference_image_urls[${j}]`,
      }),
    );
  });
  many('scene_image', 'scene_image_urls', body.scene_image_urls);
  return remote;
}

/** `@Element<n>` and `@Image<n>` cited in the prompt must name an element / scene image the request carries. */
function checkCitations(prompt: string, body: VideoJobInput): void {
  const cited = [
    { tag: 'Element', field: 'elements', count: body.elements?.length ?? 0 },
    { tag: 'Image', field: 'scene_image_urls', count: body.scene_image_urls?.length ?? 0 },
  ];
  for (const { tag, field, count } of cited) {
    for (const match of prompt.matchAll(new RegExp(`@${tag}(\\d+)`, 'g'))) {
      const n = Number(match[1]);
      if (n < 1 || n > count)
        throw fieldError(
          ['prompt', field],
          `cites @${tag}${match[1]} but ${field} has ${count} entr${count === 1 ? 'y' : 'ies'}`,
        );
    }
  }
}

/** POST /video/queue: the body checked against every rule of the model; remote media are listed, not fetched. */
export function checkVideoJob(model: CatalogModel, input: unknown): ParsedVideoJob {
  const body = parseInput(VideoJobInput, input);
  requireType(model, 'video');
  const rules = videoRules(model);
  const limit = rules.promptCharacterLimit;
  // The upscale model needs no prompt (it scales the video it is given).
  const prompt = body.prompt ?? '';
  if (body.prompt === undefined && !rules.upscale) throw fieldError('prompt', 'Required: at least 1 character');
  if ([...prompt].length > limit) throw fieldError('prompt', `at most ${limit} characters for this model`);
  const shape = checkShape(rules, body);
  if (rules.upscale && body.video_url === undefined) throw fieldError('video_url', 'required by the upscale model');
  if (rules.modelType === 'image-to-video' && body.image_url === undefined)
    throw fieldError('image_url', 'required by this image-to-video model');
  const referenceMedia = (body.reference_image_urls?.length ?? 0) + (body.reference_video_urls?.length ?? 0);
  if ((body.reference_audio_urls?.length ?? 0) > 0 && referenceMedia === 0)
    throw fieldError('reference_audio_urls', 'needs at least one reference image or reference video');
  checkCitations(prompt, body);
  return {
    request: {
      kind: 'video',
      prompt,
      ...(body.negative_prompt !== undefined &&
        body.negative_prompt !== '' && { negativePrompt: body.negative_prompt }),
      ...shape,
    },
    remote: remoteInputs(body),
    durationFromInput: shape.duration === undefined,
  };
}

/**
 * An upscale job without a duration lasts as long as its fetched video_url, in whole seconds rounded up, and at most
 * the longest duration the model lists; a video whose length cannot be read needs a duration (400).
 */
export function withInputDuration<T extends { readonly durationSeconds: number }>(
  model: CatalogModel,
  request: T,
  inputs: readonly JobInput[],
): T {
  const seconds = inputs.find((input) => input.role === 'video')?.durationSeconds;
  if (seconds === undefined || !(seconds > 0))
    throw fieldError(['video_url', 'duration'], 'the length of video_url could not be read; send duration');
  const whole = Math.max(1, Math.ceil(seconds - 0.001));
  const longest = Math.max(0, ...videoRules(model).durations.map((duration) => durationSecondsOf(duration, 0)));
  if (longest > 0 && whole > longest)
    throw fieldError('video_url', `is ${seconds.toFixed(1)} s long; this model upscales at most ${longest} s`);
  return { ...request, durationSeconds: whole };
}

/**
 * POST /video/quote `{model, duration, aspect_ratio?, resolution?, upscale_factor?, audio?}`. The upscale model may
 * give video_url instead of duration: `videoUrl` is then the input whose length the quote needs.
 */
export function checkVideoQuote(model: CatalogModel, input: unknown): { basis: ParsedVideoShape; video?: RemoteInput } {
  const body = parseInput(VideoQuoteInput, input);
  requireType(model, 'video');
  const basis = checkShape(videoRules(model), body);
  if (basis.duration !== undefined) return { basis };
  if (body.video_url === undefined)
    throw fieldError(
      'duration',
      'Required to quote the upscale model without video_url: its price is per second of the video',
    );
  return { basis, video: { role: 'video', url: body.video_url, field: 'video_url' } };
}
