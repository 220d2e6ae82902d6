import { AppError } from '../../errors.ts';
import { parseJson, upstreamErrorMessage } from '../chat/openai-wire.ts';
import { brokenError, cancelledError, timeoutError, upstreamStatusError } from '../upstream-errors.ts';
import type {
  Transcript,
  TranscriptionEngine,
  TranscriptionRequest,
  TranscriptSegment,
  TranscriptWord,
} from './transcription-engine.ts';

/*
 * An OpenAI-compatible transcription server (faster-whisper-server/speaches, whisper.cpp's server with its OpenAI
 * route, OpenAI): POST {baseUrl}/audio/transcriptions as multipart (file, model, language, prompt, temperature),
 * always asking for verbose_json (segments, and words when wanted): the service renders the caller's format
 * (json, text, srt, vtt, verbose_json) itself. A server that answers plain `{text}` works too (no segments).
 */

export const OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS = 300_000;

export interface OpenAITranscriptionSettings {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

export class OpenAITranscriptionEngine implements TranscriptionEngine {
  readonly simulated = false;
  private readonly url: string;

  constructor(
    readonly id: string,
    private readonly settings: OpenAITranscriptionSettings,
  ) {
    const base = new URL(settings.baseUrl);
    this.url = `${base.origin}${base.pathname.replace(/\/+$/, '') || '/v1'}/audio/transcriptions`;
  }

  async transcribe(
    upstreamModel: string,
    request: TranscriptionRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<Transcript> {
    const caller = options.signal;
    if (caller?.aborted) throw cancelledError();
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    const form = new FormData();
    form.append(
      'file',
      new Blob([new Uint8Array(request.audio)], { type: request.contentType ?? 'application/octet-stream' }),
      request.filename,
    );
    form.append('model', upstreamModel);
    form.append('response_format', 'verbose_json');
    if (request.language) form.append('language', request.language);
    if (request.prompt) form.append('prompt', request.prompt);
    if (request.temperature !== undefined) form.append('temperature', String(request.temperature));
    form.append('timestamp_granularities[]', 'segment');
    if (request.words) form.append('timestamp_granularities[]', 'word');
    let status: number;
    let text: string;
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          ...this.settings.headers,
          ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}),
        },
        body: form,
        signal: caller ? AbortSignal.any([caller, deadline]) : deadline,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (caller?.aborted) throw cancelledError();
      const detail = `${this.id}: ${error instanceof Error ? error.message : String(error)}`;
      if (deadline.aborted) throw timeoutError(this.settings.timeoutMs, 'answer', detail);
      throw brokenError('could not be reached', detail);
    }
    if (status !== 200) throw upstreamStatusError(status, upstreamErrorMessage(text), 'transcription server');
    const body = parseJson(text) as Record<string, unknown> | undefined;
    if (typeof body !== 'object' || body === null || typeof body.text !== 'string')
      throw brokenError('sent a transcription answer without text');
    const segments: TranscriptSegment[] = Array.isArray(body.segments)
      ? (body.segments as Record<string, unknown>[]).flatMap((segment) => {
          const start = num(segment.start);
          const end = num(segment.end);
          return start !== undefined && end !== undefined && typeof segment.text === 'string'
            ? [{ start, end, text: segment.text.trim() }]
            : [];
        })
      : [];
    const words: TranscriptWord[] | undefined = Array.isArray(body.words)
      ? (body.words as Record<string, unknown>[]).flatMap((word) => {
          const start = num(word.start);
          const end = num(word.end);
          return start !== undefined && end !== undefined && typeof word.word === 'string'
            ? [{ word: word.word, start, end }]
            : [];
        })
      : undefined;
    return {
      text: body.text.trim(),
      language: typeof body.language === 'string' ? body.language : request.language,
      segments,
      words,
    };
  }
}
