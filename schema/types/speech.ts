import { formatNano } from '../../src/billing/money.ts';
import {
  ForbiddenError,
  InsufficientBalanceError,
  InvalidModelError,
  PayloadTooLargeError,
  SpendLimitExceededError,
  UpstreamError,
  ValidationError,
} from '../../src/errors.ts';
import type { SpeechDescription } from '../../src/media/speech/speech.service.ts';
import type { CloneOutcome, ModelVoices } from '../../src/media/speech/voice-cloning.ts';
import { VOICE_SAMPLE_MAX_BYTES } from '../../src/media/speech/voice-cloning.ts';
import type { VoiceSummary } from '../../src/media/speech/voices.repository.ts';
import type { SettledCharge } from '../../src/billing/billing.types.ts';
import { requireAccount } from '../../src/auth/permissions.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';
import { INCLUDE_BASE64_ARG, MediaFileRef, mediaFileFor, PAID_MEDIA_ERRORS, type MediaFile } from './media.ts';

const AudioFormatEnum = builder.enumType('AudioFormat', {
  description: 'The encoding of synthesised speech (REST `response_format`).',
  values: {
    MP3: { value: 'mp3' },
    OPUS: { value: 'opus', description: 'Opus in an Ogg container.' },
    AAC: { value: 'aac', description: 'AAC in ADTS frames.' },
    FLAC: { value: 'flac' },
    WAV: { value: 'wav' },
    PCM: { value: 'pcm', description: 'Raw 16-bit little-endian mono samples at 24 kHz.' },
  } as const,
});

type SynthesizedSpeech = SpeechDescription & { readonly file: MediaFile; readonly charge: SettledCharge };

const SpeechResultRef = builder.objectRef<SynthesizedSpeech>('SpeechResult').implement({
  description: 'Synthesised speech.',
  fields: (t) => ({
    file: t.field({
      type: MediaFileRef,
      description: 'The audio: a signed URL, and base64 with includeBase64.',
      resolve: (speech) => speech.file,
    }),
    contentType: t.exposeString('contentType', { description: 'The MIME type of the audio, e.g. audio/mpeg.' }),
    format: t.field({ type: AudioFormatEnum, resolve: (speech) => speech.format }),
    model: t.exposeString('model', { description: 'The model that spoke (a compatibility name resolved).' }),
    voice: t.exposeString('voice'),
    characters: t.exposeInt('characters', { description: 'Characters billed (Unicode code points of the input).' }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (speech) => formatNano(speech.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, resolve: (speech) => speech.charge.currency }),
  }),
});

const SpeechInputRef = builder.inputType('SpeechInput', {
  description: 'As the REST body of POST /api/v1/audio/speech (without streaming).',
  fields: (t) => ({
    input: t.string({ required: true, description: '1 to 4096 characters.' }),
    model: t.string({ required: false, description: 'A tts model id, trait or compatibility name; has a default.' }),
    voice: t.string({ required: false, description: "One of the model's voices, or a cloned voice `vv_<id>`." }),
    language: t.string({ required: false, description: '2 to 32 characters; unsupported languages are ignored.' }),
    prompt: t.string({ required: false, description: 'At most 500 characters; models with supportsPromptParam.' }),
    responseFormat: t.field({ type: AudioFormatEnum, required: false, description: 'Default MP3.' }),
    speed: t.float({ required: false, description: '0.25 to 4; default 1.' }),
    temperature: t.float({ required: false, description: '0 to 2; models with supportsTemperatureParam.' }),
    topP: t.float({ required: false, description: '0 to 1; models with supportsTopPParam.' }),
  }),
});

const ClonedVoiceRef = builder.objectRef<CloneOutcome>('ClonedVoice').implement({
  description: 'A voice cloned from a reference sample.',
  fields: (t) => ({
    voice: t.exposeString('voice', { description: 'The handle (`vv_<id>`) to pass as `voice`.' }),
    model: t.exposeString('model', { description: 'The only model the voice can be used with.' }),
    sampleSeconds: t.exposeFloat('sampleSeconds'),
    expiresAt: t.field({ type: 'DateTime', resolve: (voice) => voice.expiresAt }),
    charged: t.field({
      type: 'Decimal',
      nullable: true,
      description: 'The amount charged, in `currency`; null when the model clones for free.',
      resolve: (voice) => (voice.charge ? formatNano(voice.charge.charged) : null),
    }),
    currency: t.field({ type: CurrencyEnum, nullable: true, resolve: (voice) => voice.charge?.currency ?? null }),
  }),
});

const VoiceSummaryRef = builder.objectRef<VoiceSummary>('VoiceSummary').implement({
  description: 'One of the caller’s cloned voices.',
  fields: (t) => ({
    voice: t.exposeString('id', { description: 'The handle (`vv_<id>`).' }),
    sampleSeconds: t.exposeFloat('sampleSeconds'),
    createdAt: t.field({ type: 'DateTime', resolve: (voice) => voice.createdAt }),
    expiresAt: t.field({ type: 'DateTime', resolve: (voice) => voice.expiresAt }),
  }),
});

const ModelVoicesRef = builder.objectRef<ModelVoices>('ModelVoices').implement({
  description: "A speech model's voices: its own, and the caller's cloned ones made with it.",
  fields: (t) => ({
    model: t.exposeString('model'),
    voices: t.stringList({ resolve: (list) => [...list.voices] }),
    defaultVoice: t.exposeString('defaultVoice'),
    cloned: t.field({ type: [VoiceSummaryRef], resolve: (list) => [...list.cloned] }),
  }),
});

builder.queryFields((t) => ({
  voices: t.field({
    type: ModelVoicesRef,
    description: "A speech model's voices and the caller's cloned voices for it (default: the default tts model).",
    authScopes: { account: true },
    args: { model: t.arg.string({ required: false }) },
    errors: { types: [ValidationError, InvalidModelError, ForbiddenError, UpstreamError] },
    resolve: (_root, { model }, context) =>
      context.services.speech.voices(context.auth, model === null || model === undefined ? {} : { model }),
  }),
}));

const nonNull = <T>(value: T | null | undefined): T | undefined => value ?? undefined;

// Mutations, not queries: they charge, and GET requests serve queries only.
builder.mutationFields((t) => ({
  synthesizeSpeech: t.field({
    type: SpeechResultRef,
    description:
      'Text to speech; the audio is a MediaFile (signed URL, base64 on request). Priced per character of input; a ' +
      'failure costs nothing.',
    authScopes: { account: true },
    args: {
      input: t.arg({ type: SpeechInputRef, required: true }),
      includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG),
    },
    errors: { types: PAID_MEDIA_ERRORS },
    resolve: async (_root, { input, includeBase64 }, context) => {
      const outcome = await context.services.speech.synthesize(
        context.auth,
        {
          input: input.input,
          model: nonNull(input.model),
          voice: nonNull(input.voice),
          language: nonNull(input.language),
          prompt: nonNull(input.prompt),
          response_format: nonNull(input.responseFormat),
          speed: nonNull(input.speed),
          temperature: nonNull(input.temperature),
          top_p: nonNull(input.topP),
          streaming: false,
        },
        { signal: context.signal },
      );
      if (outcome.streaming) throw new Error('unreachable: a non-streaming call returned a stream');
      // Stored and signed once paid for (the audio is charged by now).
      const file = await mediaFileFor(
        context,
        requireAccount(context.auth).accountId,
        { bytes: outcome.audio, contentType: outcome.contentType },
        { includeBase64 },
      );
      const { audio: _audio, ...rest } = outcome;
      return { ...rest, file };
    },
  }),
  cloneVoice: t.field({
    type: ClonedVoiceRef,
    description:
      'Clones a voice from a reference sample (WAV or MP3, 5 to 60 s, at most 15 MB) sent as a GraphQL multipart ' +
      'upload; the `vv_<id>` handle works for this account with this model only. Priced per clone.',
    authScopes: { account: true },
    args: { file: t.arg({ type: 'File', required: true }), model: t.arg.string({ required: false }) },
    errors: {
      types: [
        ValidationError,
        InvalidModelError,
        ForbiddenError,
        PayloadTooLargeError,
        InsufficientBalanceError,
        SpendLimitExceededError,
        UpstreamError,
      ],
    },
    resolve: async (_root, { file, model }, context) => {
      if (file.size > VOICE_SAMPLE_MAX_BYTES) throw new PayloadTooLargeError(VOICE_SAMPLE_MAX_BYTES);
      const bytes = new Uint8Array(await file.arrayBuffer());
      return context.services.speech.cloneVoice(
        context.auth,
        { bytes, model: nonNull(model) },
        { signal: context.signal },
      );
    },
  }),
}));
