import { z } from 'zod';
import { requireAccount } from '../../src/auth/permissions.ts';
import { CloneVoiceInput, SpeechInput } from '../../src/media/speech/speech.inputs.ts';
import { VOICE_SAMPLE_MAX_BYTES } from '../../src/media/speech/voice-cloning.ts';
import { balanceHeaders, json, text } from '../http.ts';
import { readMultipartUpload } from '../multipart.ts';
import type { Route } from '../router.ts';

const CloneBody = CloneVoiceInput.extend({
  file: z.file().describe('The reference sample: WAV or MP3, 5 to 60 seconds of one speaker, at most 15 MB'),
});

export const speechRoutes: Route[] = [
  {
    method: 'POST',
    path: '/audio/speech',
    access: 'account',
    doc: {
      summary: 'Text to speech (OpenAI-compatible). Priced per character of input (the model pricing `input`, per 1M).',
      tags: ['Audio'],
      body: SpeechInput,
      responseDescription:
        'The audio (audio/mpeg, audio/ogg, audio/aac, audio/flac, audio/wav or audio/pcm: 16-bit mono 24 kHz). ' +
        'With streaming=true it is sent with chunked transfer as each sentence is synthesised.',
    },
    async handler(call) {
      const { services, auth, signal } = call;
      const outcome = await services.speech.synthesize(auth, await call.json(), { signal });
      const headers = { 'content-type': outcome.contentType, 'cache-control': 'no-store' };
      if (!outcome.streaming) return text(outcome.audio, { ...headers, ...balanceHeaders(outcome.charge) });
      // No length: Node sends it chunked. Audio is never compressed (rest/compression.ts handles JSON only).
      return { status: 200, headers, stream: outcome.chunks };
    },
  },
  {
    method: 'POST',
    path: '/audio/voices',
    access: 'account',
    bodyLimit: 'voiceSample',
    doc: {
      summary:
        'Clone a voice from a reference sample; returns a `vv_<id>` handle usable as `voice` with that model, by this ' +
        'account only. Priced per clone (the model pricing `voice_clone`).',
      tags: ['Audio'],
      body: CloneBody,
      bodyContentType: 'multipart/form-data',
      response: z.object({
        voice: z.string().describe('The handle, `vv_` and 24 hex digits'),
        model: z.string(),
        sample_seconds: z.number(),
        expires_at: z.string().describe('ISO 8601; the model voice_cloning.retention_days after creation'),
      }),
    },
    async handler({ headers, body, services, auth, signal }) {
      // Refuse an unauthenticated upload before reading any of it.
      requireAccount(auth);
      const { file, fields } = await readMultipartUpload(headers, body, 'file', {
        maxFileBytes: VOICE_SAMPLE_MAX_BYTES,
      });
      const cloned = await services.speech.cloneVoice(auth, { bytes: file.bytes, model: fields.model }, { signal });
      return json(
        {
          voice: cloned.voice,
          model: cloned.model,
          sample_seconds: cloned.sampleSeconds,
          expires_at: cloned.expiresAt.toISOString(),
        },
        200,
        cloned.charge ? balanceHeaders(cloned.charge) : {},
      );
    },
  },
];
