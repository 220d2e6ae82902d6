import { z } from 'zod';
import { requireAccount } from '../../src/auth/permissions.ts';
import { CloneVoiceInput, SpeechInput, VoicesQueryInput } from '../../src/media/speech/speech.inputs.ts';
import type { ListedVoice } from '../../src/media/speech/voice-list.ts';
import { VOICE_SAMPLE_MAX_BYTES } from '../../src/media/speech/voice-cloning.ts';
import { balanceHeaders, json, parseQuery, text } from '../http.ts';
import { readMultipartUpload } from '../multipart.ts';
import type { Route } from '../router.ts';

const CloneBody = CloneVoiceInput.extend({
  file: z.file().describe('The reference sample: WAV or MP3, 5 to 60 seconds of one speaker, at most 15 MB'),
});

const VoiceWire = z.object({
  id: z.string().describe('What to pass as `voice`: a built-in voice name, or a cloned handle `vv_…`'),
  object: z.literal('voice'),
  model: z.string().describe('The model the voice works with (cloned voices: only that one)'),
  type: z.enum(['builtin', 'cloned']),
  default: z.boolean().optional().describe("Built-in voices: whether it is the model's default voice"),
  sample_seconds: z.number().optional().describe('Cloned voices: the length of the reference sample'),
  created_at: z.number().int().optional().describe('Cloned voices: Unix seconds'),
  expires_at: z.number().int().optional().describe('Cloned voices: Unix seconds; the handle stops working then'),
});

const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

function voiceWire(voice: ListedVoice): z.infer<typeof VoiceWire> {
  if (voice.type === 'builtin')
    return { id: voice.id, object: 'voice', model: voice.model, type: 'builtin', default: voice.isDefault === true };
  return {
    id: voice.id,
    object: 'voice',
    model: voice.model,
    type: 'cloned',
    ...(voice.sampleSeconds !== undefined && { sample_seconds: voice.sampleSeconds }),
    ...(voice.createdAt && { created_at: unixSeconds(voice.createdAt) }),
    ...(voice.expiresAt && { expires_at: unixSeconds(voice.expiresAt) }),
  };
}

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
      // The public schema of this answer is closed to these two fields.
      response: z.object({
        id: z.string().describe('The handle, `vv_` and 24 hex digits; GET /audio/voices shows its expiry'),
        model: z.string(),
      }),
    },
    async handler({ headers, body, services, auth, signal }) {
      // Refuse an unauthenticated upload before reading any of it.
      requireAccount(auth);
      const { file, fields } = await readMultipartUpload(headers, body, 'file', {
        maxFileBytes: VOICE_SAMPLE_MAX_BYTES,
      });
      const cloned = await services.speech.cloneVoice(auth, { bytes: file.bytes, model: fields.model }, { signal });
      return json({ id: cloned.voice, model: cloned.model }, 200, cloned.charge ? balanceHeaders(cloned.charge) : {});
    },
  },
  {
    method: 'GET',
    path: '/audio/voices',
    access: 'account',
    doc: {
      summary:
        "The voices usable as `voice` with /audio/speech: each speech model's built-in voices and the caller's own " +
        'live cloned voices (never another account’s). Free.',
      tags: ['Audio'],
      query: VoicesQueryInput,
      response: z.object({ object: z.literal('list'), data: z.array(VoiceWire) }),
    },
    async handler({ services, auth, url }) {
      const voices = await services.speech.listVoices(auth, parseQuery(VoicesQueryInput, url));
      return json({ object: 'list', data: voices.map(voiceWire) });
    },
  },
];
