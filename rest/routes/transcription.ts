import { z } from 'zod';
import { requireAccount } from '../../src/auth/permissions.ts';
import { TRANSCRIPTION_MAX_BYTES, TranscriptionFields } from '../../src/media/transcription/transcription.inputs.ts';
import { UpstreamError, ValidationError } from '../../src/errors.ts';
import { balanceHeaders, text } from '../http.ts';
import { readMultipartUpload } from '../multipart.ts';
import type { Route } from '../router.ts';

/* POST /audio/transcriptions and POST /video/transcriptions (docs/api.md, Transcriptions). */

const TranscriptionBody = TranscriptionFields.extend({
  file: z.file().describe('The audio: WAV, FLAC, M4A, AAC, MP4, MP3, OGG, OGA, WEBM (anything ffmpeg reads); 25 MB'),
});

const VideoTranscriptionInput = z.strictObject({
  url: z.url().describe('A public YouTube video URL'),
  response_format: z.enum(['json', 'text']).default('json'),
});

export const transcriptionRoutes: Route[] = [
  {
    method: 'POST',
    path: '/audio/transcriptions',
    access: 'account',
    bodyLimit: 'audioFile',
    doc: {
      summary:
        'Speech to text (OpenAI/Whisper-compatible multipart). response_format json (with `duration`, and ' +
        '`timestamps` when asked), text, srt, vtt, verbose_json. Priced per started second of audio.',
      tags: ['Audio'],
      body: TranscriptionBody,
      bodyContentType: 'multipart/form-data',
      responseDescription: 'JSON, plain text, SRT or WebVTT as response_format says',
    },
    async handler({ headers, body, services, auth, signal }) {
      // Refuse an unauthenticated upload before reading any of it.
      requireAccount(auth);
      const upload = await readMultipartUpload(headers, body, 'file', { maxFileBytes: TRANSCRIPTION_MAX_BYTES });
      const outcome = await services.transcription.transcribe(
        auth,
        {
          bytes: upload.file.bytes,
          filename: upload.file.filename,
          contentType: upload.file.contentType,
          fields: upload.fields,
        },
        { signal },
      );
      return text(outcome.rendered.body, {
        'content-type': outcome.rendered.contentType,
        ...balanceHeaders(outcome.charge),
        ...(outcome.simulated && { 'x-lagoon-simulated': 'transcription' }),
      });
    },
  },
  {
    method: 'POST',
    path: '/video/transcriptions',
    access: 'account',
    doc: {
      summary: 'Transcript of a YouTube video. Needs a video transcription upstream; none is built in (503).',
      tags: ['Audio'],
      body: VideoTranscriptionInput,
    },
    async handler(call) {
      const input = VideoTranscriptionInput.safeParse(await call.json());
      if (!input.success) throw ValidationError.fromZod(input.error);
      requireAccount(call.auth);
      throw new UpstreamError(
        'Video transcription needs an upstream that can fetch YouTube videos; this server has none configured',
        'SERVICE_UNAVAILABLE',
      );
    },
  },
];
