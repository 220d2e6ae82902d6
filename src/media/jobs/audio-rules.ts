import { z } from 'zod';
import type { CatalogModel } from '../../catalog/model.ts';
import { ValidationError } from '../../errors.ts';
import type { AudioJobRequest } from '../../providers/jobs/job-engine.ts';
import { parseInput } from '../../validation.ts';
import { AudioJobInput, AudioQuoteInput } from './job-queue.inputs.ts';

/*
 * A music model's rules from its catalog record (model_spec fields, docs/api.md, Queued jobs). Durations: a model
 * with min_duration/max_duration takes any whole number of seconds in that range (duration_options are then the
 * suggested lengths); a model with only duration_options takes exactly one of them; a model with neither takes
 * no duration_seconds at all.
 */

const Positive = z.number().positive();
const MusicSpec = z.looseObject({
  prompt_character_limit: z.number().int().positive().optional(),
  min_prompt_length: z.number().int().nonnegative().optional(),
  lyrics_character_limit: z.number().int().positive().optional(),
  lyrics_required: z.boolean().optional(),
  supports_lyrics: z.boolean().optional(),
  supports_force_instrumental: z.boolean().optional(),
  supports_lyrics_optimizer: z.boolean().optional(),
  supports_language_code: z.boolean().optional(),
  supports_speed: z.boolean().optional(),
  supports_custom_voice_id: z.boolean().optional(),
  default_speed: Positive.optional(),
  min_speed: Positive.optional(),
  max_speed: Positive.optional(),
  voices: z.array(z.string()).optional(),
  default_voice: z.string().optional(),
  duration_options: z.array(z.number().int().positive()).optional(),
  min_duration: z.number().int().positive().optional(),
  max_duration: z.number().int().positive().optional(),
  default_duration: z.number().int().positive().optional(),
  supported_formats: z.array(z.string()).optional(),
  default_format: z.string().optional(),
});
type MusicSpec = z.output<typeof MusicSpec>;

/** The length of a track when the model exposes no duration metadata (the engine decides; this is what it gets). */
export const DEFAULT_TRACK_SECONDS = 30;
const JOB_AUDIO_FORMATS = ['mp3', 'wav', 'flac'] as const;
type JobAudioFormat = (typeof JOB_AUDIO_FORMATS)[number];

const specCache = new WeakMap<CatalogModel, MusicSpec>();

/** The model's music fields, read once per catalog snapshot (the config loader validated them). */
export function musicSpec(model: CatalogModel): MusicSpec {
  let spec = specCache.get(model);
  if (!spec) {
    const parsed = MusicSpec.safeParse(model.spec);
    spec = parsed.success ? parsed.data : {};
    specCache.set(model, spec);
  }
  return spec;
}

/** A 400 naming one field (or several, when a rule ties two together). */
export function fieldError(field: string | readonly string[], message: string): ValidationError {
  const fields = typeof field === 'string' ? [field] : field;
  return new ValidationError(
    `Invalid request: ${fields[0] ?? 'body'}: ${message}`,
    fields.map((name) => ({ path: [name], message })),
  );
}

const chars = (text: string) => [...text].length;

/** A queue or quote route given a model of another type (a resolved trait or a mapping that points elsewhere). */
export function requireType(model: CatalogModel, type: 'music' | 'video'): void {
  if (model.type !== type) throw fieldError('model', `${model.id} is a ${model.type} model, not a ${type} model`);
}

export interface AudioDurationRule {
  /** No duration metadata: the request may not choose one. */
  readonly configurable: boolean;
  readonly min: number;
  readonly max: number;
  /** Set when the model takes exactly these lengths. */
  readonly options: readonly number[] | undefined;
  readonly default: number;
}

export function audioDurationRule(model: CatalogModel): AudioDurationRule {
  const spec = musicSpec(model);
  const options = spec.duration_options ?? [];
  const ranged = spec.min_duration !== undefined || spec.max_duration !== undefined;
  const configurable = ranged || options.length > 0 || spec.default_duration !== undefined;
  const min = spec.min_duration ?? (options.length > 0 ? Math.min(...options) : 1);
  const max = spec.max_duration ?? (options.length > 0 ? Math.max(...options) : (spec.default_duration ?? 86_400));
  return {
    configurable,
    min,
    max,
    options: !ranged && options.length > 0 ? options : undefined,
    default: spec.default_duration ?? options[0] ?? spec.min_duration ?? DEFAULT_TRACK_SECONDS,
  };
}

/** The track length of a request (or of a quote), checked against the model's duration rule. */
export function audioDuration(model: CatalogModel, requested: number | undefined): number {
  const rule = audioDurationRule(model);
  if (requested === undefined) return rule.default;
  if (!rule.configurable) throw fieldError('duration_seconds', 'this model does not take a duration');
  if (rule.options && !rule.options.includes(requested))
    throw fieldError('duration_seconds', `must be one of: ${rule.options.join(', ')}`);
  if (requested < rule.min || requested > rule.max)
    throw fieldError('duration_seconds', `must be ${rule.min} to ${rule.max} seconds for this model`);
  return requested;
}

function audioFormat(spec: MusicSpec): JobAudioFormat {
  const usable = (format: string | undefined): format is JobAudioFormat =>
    format !== undefined && (JOB_AUDIO_FORMATS as readonly string[]).includes(format);
  if (usable(spec.default_format)) return spec.default_format;
  return (spec.supported_formats ?? []).find(usable) ?? 'mp3';
}

function checkPrompt(spec: MusicSpec, prompt: string): void {
  const length = chars(prompt);
  const min = spec.min_prompt_length ?? 1;
  if (length < min) throw fieldError('prompt', `at least ${min} characters for this model`);
  const max = spec.prompt_character_limit;
  if (max !== undefined && length > max) throw fieldError('prompt', `at most ${max} characters for this model`);
}

/** Lyrics after the lyric rules: undefined for none (an empty or blank lyrics_prompt is none). */
function checkLyrics(spec: MusicSpec, body: AudioJobInput): string | undefined {
  const lyrics = body.lyrics_prompt !== undefined && body.lyrics_prompt.trim() !== '' ? body.lyrics_prompt : undefined;
  if (body.lyrics_optimizer === true && spec.supports_lyrics_optimizer !== true)
    throw fieldError('lyrics_optimizer', 'this model has no lyrics optimizer');
  if (body.force_instrumental === true && spec.supports_force_instrumental !== true)
    throw fieldError('force_instrumental', 'this model cannot force an instrumental track');
  if (lyrics === undefined) {
    if (spec.lyrics_required === true && body.lyrics_optimizer !== true)
      throw fieldError('lyrics_prompt', 'required by this model');
    return undefined;
  }
  // A model that requires lyrics takes them even if its listing forgot supports_lyrics.
  if (spec.supports_lyrics !== true && spec.lyrics_required !== true)
    throw fieldError('lyrics_prompt', 'this model does not take lyrics');
  if (body.lyrics_optimizer === true)
    throw fieldError(['lyrics_prompt', 'lyrics_optimizer'], 'must be empty when lyrics_optimizer is true');
  if (body.force_instrumental === true)
    throw fieldError(['lyrics_prompt', 'force_instrumental'], 'must be empty when force_instrumental is true');
  const limit = spec.lyrics_character_limit;
  if (limit !== undefined && chars(lyrics) > limit)
    throw fieldError('lyrics_prompt', `at most ${limit} characters for this model`);
  return lyrics;
}

function checkVoice(spec: MusicSpec, voice: string | undefined): string | undefined {
  const voices = spec.voices ?? [];
  if (voice === undefined) return spec.default_voice;
  if (voices.includes(voice) || voice === spec.default_voice || spec.supports_custom_voice_id === true) return voice;
  if (voices.length === 0) throw fieldError('voice', 'this model has no voices to choose from');
  throw fieldError('voice', `must be one of: ${voices.join(', ')}`);
}

function checkSpeed(spec: MusicSpec, speed: number | undefined): number | undefined {
  if (speed === undefined) return spec.supports_speed === true ? spec.default_speed : undefined;
  if (spec.supports_speed !== true) throw fieldError('speed', 'this model does not take a speed');
  const min = spec.min_speed;
  const max = spec.max_speed;
  if ((min !== undefined && speed < min) || (max !== undefined && speed > max))
    throw fieldError('speed', `must be ${min ?? 0.25} to ${max ?? 4} for this model`);
  return speed;
}

/** POST /audio/queue: the body checked against every rule of the model, as the engine takes it. */
export function checkAudioJob(model: CatalogModel, input: unknown): AudioJobRequest {
  const body = parseInput(AudioJobInput, input);
  requireType(model, 'music');
  const spec = musicSpec(model);
  checkPrompt(spec, body.prompt);
  const lyrics = checkLyrics(spec, body);
  if (body.language_code !== undefined && spec.supports_language_code !== true)
    throw fieldError('language_code', 'this model does not take a language code');
  const voice = checkVoice(spec, body.voice);
  const speed = checkSpeed(spec, body.speed);
  return {
    kind: 'audio',
    prompt: body.prompt,
    ...(lyrics !== undefined && { lyrics }),
    durationSeconds: audioDuration(model, body.duration_seconds),
    forceInstrumental: body.force_instrumental === true,
    ...(voice !== undefined && { voice }),
    ...(body.language_code !== undefined && { languageCode: body.language_code.toLowerCase() }),
    ...(speed !== undefined && { speed }),
    format: audioFormat(spec),
  };
}

/** What an audio price depends on: the track length and the characters of prompt and lyrics. */
export interface AudioQuote {
  readonly kind: 'audio-quote';
  readonly durationSeconds: number;
  readonly characters: number;
}

/** POST /audio/quote `{model, duration_seconds?, character_count?}` (the model is resolved by the caller). */
export function checkAudioQuote(model: CatalogModel, input: unknown): AudioQuote {
  const body = parseInput(AudioQuoteInput, input);
  requireType(model, 'music');
  return {
    kind: 'audio-quote',
    durationSeconds: audioDuration(model, body.duration_seconds),
    characters: body.character_count ?? 0,
  };
}

/** The characters a per-thousand-characters price counts: prompt and lyrics, in code points. */
export const audioCharacters = (request: AudioJobRequest): number =>
  chars(request.prompt) + (request.lyrics === undefined ? 0 : chars(request.lyrics));
