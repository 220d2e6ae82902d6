import type { Pool } from 'undici';
import { undici } from '../../undici.ts';
import { z } from 'zod';
import { followAbort } from '../../abort.ts';
import { AppError } from '../../errors.ts';
import type {
  ChatCallOptions,
  ChatEngine,
  UpstreamChatCompletion,
  UpstreamChatRequest,
  UpstreamChatStream,
} from './chat-engine.ts';
import {
  ChunkNormaliser,
  CompletionSchema,
  ModelListSchema,
  normaliseCompletion,
  parseJson,
  upstreamErrorMessage,
} from './openai-wire.ts';
import { SseChunkStream, type ResponseBody } from './sse-chunk-stream.ts';
import {
  brokenError,
  cancelledError,
  ChatUpstreamError,
  readLimited,
  timeoutError,
  upstreamStatusError,
} from '../upstream-errors.ts';

/*
 * The OpenAI chat-completions protocol over HTTP (vLLM, llama.cpp server, Ollama, OpenAI and the like).
 * One undici keep-alive pool per provider; streams are read as SSE (sse-chunk-stream.ts). No retries here:
 * the gateway decides (it knows whether output has started and which provider comes next).
 */

/** `options:` of an openai-compatible provider in the operator file. */
export const OpenAICompatibleOptions = z.strictObject({
  /** Longest silence between two stream chunks (or body bytes) before the call fails with 504; default timeoutMs. */
  idleTimeoutMs: z.number().int().positive().optional(),
  /** Open connections to the upstream at most (default: no limit, so every stream gets its own). */
  maxConnections: z.number().int().positive().optional(),
  /** How long an idle kept-alive connection stays open (default 30 s). */
  keepAliveMs: z.number().int().positive().optional(),
  /** Every model of this upstream inlines `<think>` blocks: always split them out. */
  splitThinkTags: z.boolean().optional(),
});
export type OpenAICompatibleOptions = z.output<typeof OpenAICompatibleOptions>;

export interface OpenAICompatibleSettings {
  /** E.g. `http://127.0.0.1:8000/v1`; requests go to `{baseUrl}/chat/completions` and `{baseUrl}/models`. */
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  /** Time to the response headers (for a non-streaming call that is the whole generation). */
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly options?: OpenAICompatibleOptions | undefined;
}

export const OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MS = 120_000;
/** A completion body larger than this is refused rather than buffered. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export class OpenAICompatibleEngine implements ChatEngine {
  readonly type = 'openai-compatible' as const;
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly idleTimeoutMs: number;

  constructor(
    readonly id: string,
    private readonly settings: OpenAICompatibleSettings,
  ) {
    const url = new URL(settings.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.idleTimeoutMs = settings.options?.idleTimeoutMs ?? settings.timeoutMs;
    this.pool = new (undici().Pool)(url.origin, {
      connections: settings.options?.maxConnections ?? null,
      keepAliveTimeout: settings.options?.keepAliveMs ?? 30_000,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: this.idleTimeoutMs,
      connect: { timeout: Math.min(settings.timeoutMs, 10_000) },
    });
  }

  get splitsThinkTags(): boolean {
    return this.settings.options?.splitThinkTags === true;
  }

  async complete(request: UpstreamChatRequest, options: ChatCallOptions): Promise<UpstreamChatCompletion> {
    const payload: Record<string, unknown> = { ...request, stream: false };
    delete payload.stream_options;
    const { body } = await this.post('/chat/completions', payload, options);
    let text: string;
    try {
      text = await readLimited(body, MAX_BODY_BYTES);
    } catch (error) {
      throw this.transportError(error, options.signal, 'broke off its answer');
    }
    const parsed = CompletionSchema.safeParse(parseJson(text));
    if (!parsed.success) throw brokenError('sent a malformed completion');
    return normaliseCompletion(parsed.data, this.splitsThinkTags || options.splitThinkTags === true, fallbackId());
  }

  async stream(request: UpstreamChatRequest, options: ChatCallOptions): Promise<UpstreamChatStream> {
    const streamOptions =
      typeof request.stream_options === 'object' && request.stream_options !== null ? request.stream_options : {};
    // Usage is always asked for: billing settles on it.
    const payload = { ...request, stream: true, stream_options: { ...streamOptions, include_usage: true } };
    // The caller's abort reaches the call through `own`, followed until the stream ends.
    const own = new AbortController();
    const caller = options.signal;
    const detach = followAbort(caller, own);
    let body: ResponseBody;
    try {
      const response = await this.post('/chat/completions', payload, { ...options, signal: own.signal });
      body = response.body;
      if (!String(response.headers['content-type'] ?? '').includes('text/event-stream')) {
        body.destroy();
        throw brokenError('did not answer with an event stream');
      }
    } catch (error) {
      detach();
      throw error;
    }
    const stream = new SseChunkStream(
      body,
      new ChunkNormaliser(this.splitsThinkTags || options.splitThinkTags === true, fallbackId()),
      own,
      (error) =>
        own.signal.aborted && !caller?.aborted ? undefined : this.transportError(error, caller, 'broke off the stream'),
      detach,
    );
    // Resolve only once the first chunk arrived: a failure before any output can still be retried elsewhere.
    await stream.start();
    return stream;
  }

  async listModels(options: { signal?: AbortSignal } = {}): Promise<string[]> {
    const deadline = AbortSignal.timeout(Math.min(this.settings.timeoutMs, 30_000));
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    let response;
    try {
      response = await this.pool.request({
        path: `${this.basePath}/models`,
        method: 'GET',
        headers: this.headers(),
        signal,
      });
    } catch (error) {
      throw deadline.aborted
        ? timeoutError(this.settings.timeoutMs)
        : this.transportError(error, options.signal, 'could not be reached');
    }
    const body = response.body as ResponseBody;
    if (response.statusCode !== 200) {
      await body.dump().catch(() => undefined);
      throw new ChatUpstreamError(
        `The model server answered HTTP ${response.statusCode} to GET /models`,
        'UPSTREAM_ERROR',
        response.statusCode >= 500,
      );
    }
    let text: string;
    try {
      text = await readLimited(body, MAX_BODY_BYTES);
    } catch (error) {
      throw this.transportError(error, options.signal, 'broke off its answer');
    }
    const parsed = ModelListSchema.safeParse(parseJson(text));
    if (!parsed.success) throw brokenError('sent a malformed model list');
    return [...new Set(parsed.data.data.map((model) => model.id))];
  }

  /** Closes the pool's connections (in-flight requests are destroyed). */
  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private headers(requestId?: string): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(requestId ? { 'x-request-id': requestId } : {}),
      ...this.settings.headers,
      ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}),
    };
  }

  /** POSTs JSON; resolves with a 200 answer's body, throws the mapped error for anything else. */
  private async post(
    path: string,
    payload: unknown,
    options: ChatCallOptions,
  ): Promise<{ body: ResponseBody; headers: Record<string, string | string[] | undefined> }> {
    if (options.signal?.aborted) throw cancelledError();
    let response;
    try {
      response = await this.pool.request({
        path: `${this.basePath}${path}`,
        method: 'POST',
        headers: this.headers(options.requestId),
        body: JSON.stringify(payload),
        signal: options.signal ?? null,
      });
    } catch (error) {
      throw this.transportError(error, options.signal, 'could not be reached');
    }
    const body = response.body as ResponseBody;
    if (response.statusCode === 200) return { body, headers: response.headers };
    let text = '';
    try {
      text = await readLimited(body, 64 * 1024);
    } catch {
      body.destroy();
    }
    throw upstreamStatusError(response.statusCode, upstreamErrorMessage(text), 'model server');
  }

  /** A transport failure as the caller sees it: cancelled, timed out (504) or broken (502). */
  private transportError(error: unknown, callerSignal: AbortSignal | undefined, what: string): AppError {
    if (error instanceof AppError) return error;
    if (callerSignal?.aborted) return cancelledError();
    const code = (error as { code?: unknown } | null)?.code;
    const detail = `${this.id}: ${typeof code === 'string' ? `${code} ` : ''}${error instanceof Error ? error.message : String(error)}`;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
      return timeoutError(this.settings.timeoutMs, 'answer', detail);
    if (code === 'UND_ERR_BODY_TIMEOUT') return timeoutError(this.idleTimeoutMs, 'send anything', detail);
    return brokenError(what, detail);
  }
}

let sequence = 0;
/** An id for upstreams that send none (the chat service sets its own public id anyway). */
function fallbackId(): string {
  sequence = (sequence + 1) % 1_000_000_000;
  return `chatcmpl-${Date.now().toString(36)}${sequence.toString(36)}`;
}
