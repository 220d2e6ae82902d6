import { AppError, ValidationError } from '../../errors.ts';
import { brokenError, cancelledError, ChatUpstreamError, timeoutError } from '../upstream-errors.ts';
import {
  AUDIO_CONTENT_TYPES,
  type SpeechAudio,
  type SpeechCallOptions,
  type SpeechEngine,
  type SpeechRequest,
} from './speech-engine.ts';

/*
 * An OpenAI-compatible speech server (Kokoro-FastAPI, openedai-speech, OpenAI itself): POST {baseUrl}/audio/speech
 * with `{model, input, voice, speed, response_format, stream}`; the audio body is passed through as it arrives.
 * `baseUrl` is the API root as for chat providers, e.g. `http://127.0.0.1:8880/v1` (a bare origin gets `/v1`).
 * Failures are the chat adapter's UpstreamErrors, so the gateway retries and falls back the same way.
 */

export const OPENAI_SPEECH_DEFAULT_TIMEOUT_MS = 60_000;

export interface OpenAISpeechSettings {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  /** Until the response headers, and the longest silence between two body chunks. */
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export class OpenAISpeechEngine implements SpeechEngine {
  readonly simulated = false;
  /** OpenAI's speech API has no reference-sample voices. */
  readonly canClone = false;
  private readonly url: string;

  constructor(
    readonly id: string,
    private readonly settings: OpenAISpeechSettings,
  ) {
    const base = new URL(settings.baseUrl);
    const path = base.pathname.replace(/\/+$/, '') || '/v1';
    this.url = `${base.origin}${path}/audio/speech`;
  }

  async synthesize(upstreamModel: string, request: SpeechRequest, options: SpeechCallOptions): Promise<SpeechAudio> {
    const caller = options.signal;
    if (caller?.aborted) throw cancelledError();
    if (typeof request.voice !== 'string')
      throw new ValidationError('voice: this model cannot use cloned voices', [
        { path: ['voice'], message: 'This model cannot use cloned voices' },
      ]);
    const own = new AbortController();
    const abort = () => own.abort();
    caller?.addEventListener('abort', abort, { once: true });
    const detach = () => caller?.removeEventListener('abort', abort);
    const body = {
      model: upstreamModel,
      input: request.text,
      voice: request.voice,
      speed: request.speed,
      response_format: request.format,
      ...(request.streaming && { stream: true }),
      ...(request.language !== undefined && { language: request.language }),
      ...(request.prompt !== undefined && { instructions: request.prompt }),
      ...(request.temperature !== undefined && { temperature: request.temperature }),
      ...(request.topP !== undefined && { top_p: request.topP }),
    };
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      own.abort();
    }, this.settings.timeoutMs);
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'audio/*, application/octet-stream',
          ...(this.settings.apiKey && { authorization: `Bearer ${this.settings.apiKey}` }),
          ...this.settings.headers,
        },
        body: JSON.stringify(body),
        signal: own.signal,
      });
    } catch (error) {
      clearTimeout(deadline);
      detach();
      throw this.transportError(error, caller, timedOut);
    }
    clearTimeout(deadline);
    if (response.status !== 200 || !response.body) {
      const text = await response.text().catch(() => '');
      detach();
      throw statusError(response.status, upstreamMessage(text));
    }
    // The first bytes before answering: a server that fails before sending any audio can still be retried.
    const chunks = this.relay(response.body, own, caller, detach);
    const first = await chunks.next();
    return { contentType: AUDIO_CONTENT_TYPES[request.format], chunks: prepend(first, chunks) };
  }

  /** The body as it arrives; a silence longer than the timeout fails the call (504), the caller's abort ends it. */
  private async *relay(
    body: ReadableStream<Uint8Array>,
    own: AbortController,
    caller: AbortSignal | undefined,
    detach: () => void,
  ): AsyncGenerator<Uint8Array> {
    const reader = body.getReader();
    let idle = false;
    try {
      for (;;) {
        const timer = setTimeout(() => {
          idle = true;
          own.abort();
        }, this.settings.timeoutMs);
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (error) {
          if (idle) throw timeoutError(this.settings.timeoutMs, 'send anything');
          throw this.transportError(error, caller, false);
        } finally {
          clearTimeout(timer);
        }
        if (next.done) return;
        if (next.value.byteLength > 0) yield next.value;
      }
    } finally {
      detach();
      if (!own.signal.aborted) own.abort();
      reader.releaseLock();
    }
  }

  private transportError(error: unknown, caller: AbortSignal | undefined, timedOut: boolean): AppError {
    if (error instanceof AppError) return error;
    if (caller?.aborted) return cancelledError();
    const detail = `${this.id}: ${error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error)}`;
    if (timedOut) return timeoutError(this.settings.timeoutMs, 'answer', detail);
    return brokenError('could not be reached or broke off', detail);
  }
}

async function* prepend(
  first: IteratorResult<Uint8Array>,
  rest: AsyncGenerator<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

/** An HTTP error status from the upstream; only the caller's own mistakes are 4xx (as the chat adapter maps them). */
function statusError(status: number, message: string | undefined): AppError {
  if (status === 400 || status === 422) {
    return new ValidationError(message ?? `The speech server rejected the request (HTTP ${status})`);
  }
  if (status === 429)
    return new ChatUpstreamError('The speech server is at capacity; try again shortly', 'MODEL_AT_CAPACITY', true);
  if (status < 500 && status !== 200)
    return new ChatUpstreamError(`The speech server refused the request (HTTP ${status})`, 'UPSTREAM_ERROR', false);
  return new ChatUpstreamError(`The speech server failed (HTTP ${status})`, 'UPSTREAM_ERROR', true);
}

/** `error.message` / `detail` / `message` of an error body, clipped. */
function upstreamMessage(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; detail?: unknown; message?: unknown };
    const error = parsed.error;
    const message =
      (typeof error === 'object' && error !== null && 'message' in error ? error.message : error) ??
      parsed.detail ??
      parsed.message;
    return typeof message === 'string' && message.length > 0 ? message.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}
