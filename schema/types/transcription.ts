import { formatNano } from '../../src/billing/money.ts';
import { PayloadTooLargeError } from '../../src/errors.ts';
import type { TranscriptionOutcome } from '../../src/media/transcription/transcription.service.ts';
import { TRANSCRIPTION_MAX_BYTES } from '../../src/media/transcription/transcription.inputs.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';
import { PAID_MEDIA_ERRORS } from './media.ts';

const TranscriptSegmentRef = builder
  .objectRef<{ readonly text: string; readonly start: number; readonly end: number }>('TranscriptSegment')
  .implement({
    fields: (t) => ({
      text: t.exposeString('text'),
      start: t.exposeFloat('start', { description: 'Seconds from the start.' }),
      end: t.exposeFloat('end'),
    }),
  });

const TranscriptionRef = builder.objectRef<TranscriptionOutcome>('Transcription').implement({
  description: 'A transcript (as POST /api/v1/audio/transcriptions with verbose_json).',
  fields: (t) => ({
    model: t.exposeString('model'),
    text: t.string({ resolve: (outcome) => outcome.transcript.text }),
    language: t.string({ nullable: true, resolve: (outcome) => outcome.transcript.language ?? null }),
    seconds: t.exposeFloat('seconds', { description: 'The length of the audio.' }),
    billedSeconds: t.exposeInt('billedSeconds', { description: 'Started seconds billed.' }),
    simulated: t.exposeBoolean('simulated', {
      description: 'Answered by the built-in simulator, which measures the audio but does not recognise speech.',
    }),
    segments: t.field({ type: [TranscriptSegmentRef], resolve: (outcome) => [...outcome.transcript.segments] }),
    charged: t.field({ type: 'Decimal', resolve: (outcome) => formatNano(outcome.charge.charged) }),
    currency: t.field({ type: CurrencyEnum, resolve: (outcome) => outcome.charge.currency }),
  }),
});

builder.mutationFields((t) => ({
  transcribeAudio: t.field({
    type: TranscriptionRef,
    description:
      'Speech to text of an audio file sent as a GraphQL multipart upload (at most 25 MB). Priced per started ' +
      'second of audio; a failure costs nothing.',
    authScopes: { account: true },
    args: {
      file: t.arg({ type: 'File', required: true }),
      model: t.arg.string({ required: false }),
      language: t.arg.string({ required: false }),
      prompt: t.arg.string({ required: false }),
    },
    errors: { types: [...PAID_MEDIA_ERRORS, PayloadTooLargeError] },
    resolve: async (_root, { file, model, language, prompt }, context) => {
      if (file.size > TRANSCRIPTION_MAX_BYTES) throw new PayloadTooLargeError(TRANSCRIPTION_MAX_BYTES);
      const fields: Record<string, string> = { response_format: 'verbose_json' };
      if (model) fields.model = model;
      if (language) fields.language = language;
      if (prompt) fields.prompt = prompt;
      return context.services.transcription.transcribe(
        context.auth,
        {
          bytes: new Uint8Array(await file.arrayBuffer()),
          filename: file.name,
          contentType: file.type || undefined,
          fields,
        },
        { signal: context.signal },
      );
    },
  }),
}));
