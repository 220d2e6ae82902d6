import { modelPrivacyOf, type AccountAuthContext } from '../../auth/auth-context.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import { clip, ForbiddenError, InvalidModelError, UpstreamError, ValidationError } from '../../errors.ts';
import type { AudioFormat } from '../../providers/speech/speech-engine.ts';
import { AUDIO_FORMATS, type SpeechInput } from './speech.inputs.ts';

/*
 * The model side of a speech request: which tts model a name means, and what that model accepts (its voices,
 * formats and optional parameters, from its `model_spec`). Each refusal is a 400 naming the field.
 */

/** The handle of a cloned voice: `vv_` and 24 hex digits (POST /audio/voices). */
export const CLONED_VOICE = /^vv_[0-9a-f]{24}$/;
export const FALLBACK_VOICE = 'af_sky';

export interface SpeechSpec {
  readonly voices?: readonly string[];
  readonly default_voice?: string;
  readonly supported_formats?: readonly string[];
  readonly default_format?: string;
  readonly supportsPromptParam?: boolean;
  readonly supportsTemperatureParam?: boolean;
  readonly supportsTopPParam?: boolean;
  readonly voice_cloning?: {
    readonly mode: 'zero_shot' | 'persistent';
    readonly accepted_formats: readonly string[];
    readonly min_sample_seconds: number;
    readonly retention_days: number;
  };
}

export const specOf = (model: CatalogModel): SpeechSpec => model.spec as SpeechSpec;

export const fieldError = (field: string, message: string): ValidationError =>
  new ValidationError(`${field}: ${message}`, [{ path: [field], message }]);

/** A tts model by id, trait or compatibility name (`tts-1`); none given: the default tts model. */
export async function resolveSpeechModel(
  catalog: CatalogService,
  auth: AccountAuthContext,
  name: string | undefined,
): Promise<CatalogModel> {
  const lookup = await catalog.lookupModel(name ?? 'default', 'tts');
  if (!lookup.model) {
    if (name === undefined) throw new UpstreamError('No speech model is configured', 'SERVICE_UNAVAILABLE');
    if (lookup.otherType)
      throw new InvalidModelError(`Model ${clip(name)} is a ${lookup.otherType} model; speech needs a tts model`);
    throw new InvalidModelError(
      `Unknown model ${clip(name)}: use a tts model id, a trait or a compatibility name from GET /api/v1/models?type=tts`,
    );
  }
  const model = lookup.model;
  if (modelPrivacyOf(auth) === 'PRIVATE_ONLY' && model.privacy !== 'private')
    throw new ForbiddenError(`This API key may only use private models; ${model.id} is ${model.privacy}`);
  if (model.offline) throw new UpstreamError(`Model ${model.id} is offline`, 'MODEL_OFFLINE');
  return model;
}

/** The catalog voice a request names (or the model's default); cloned handles are checked by the caller. */
export function catalogVoice(model: CatalogModel, voice: string | undefined): string {
  const spec = specOf(model);
  const chosen = voice ?? spec.default_voice ?? FALLBACK_VOICE;
  if (spec.voices && !spec.voices.includes(chosen)) {
    throw fieldError(
      'voice',
      `Voice ${clip(chosen)} is not a voice of model ${model.id}; use one of ${spec.voices.join(', ')} or a cloned voice (vv_…) of this model`,
    );
  }
  return chosen;
}

/** The response format: the request's, else the model's default, else mp3; it must be one the model produces. */
export function responseFormat(model: CatalogModel, requested: AudioFormat | undefined): AudioFormat {
  const spec = specOf(model);
  const fallback = (AUDIO_FORMATS as readonly string[]).includes(spec.default_format ?? '')
    ? (spec.default_format as AudioFormat)
    : 'mp3';
  const format = requested ?? fallback;
  if (spec.supported_formats && !spec.supported_formats.includes(format))
    throw fieldError('response_format', `Model ${model.id} produces ${spec.supported_formats.join(', ')}`);
  return format;
}

/** The optional parameters a model takes; the others are ignored, as the public API documents them. */
export interface SpeechOptions {
  readonly prompt: string | undefined;
  readonly temperature: number | undefined;
  readonly topP: number | undefined;
}

/** prompt, temperature and top_p pass on only for the models whose flags allow them; otherwise they are dropped. */
export function supportedOptions(model: CatalogModel, input: SpeechInput): SpeechOptions {
  const spec = specOf(model);
  return {
    prompt: spec.supportsPromptParam === true ? input.prompt : undefined,
    temperature: spec.supportsTemperatureParam === true ? input.temperature : undefined,
    topP: spec.supportsTopPParam === true ? input.top_p : undefined,
  };
}
