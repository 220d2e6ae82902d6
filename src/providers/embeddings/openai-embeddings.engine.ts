import { isAscii } from 'node:buffer';
import type { Pool } from 'undici';
import { undici } from '../../undici.ts';
import { AppError } from '../../errors.ts';
import { upstreamErrorMessage } from '../chat/openai-wire.ts';
import type { ResponseBody } from '../chat/sse-chunk-stream.ts';
import {
  brokenError,
  cancelledError,
  readLimitedBytes,
  timeoutError,
  upstreamStatusError,
} from '../upstream-errors.ts';
import { parseLifted, type LiftedJson } from '../lifted-json.ts';
import {
  Base64Bytes,
  FloatsJson,
  type EmbeddingEngine,
  type EmbeddingRequest,
  type EmbeddingResult,
  type EmbeddingStream,
  type EngineVector,
  type IndexedVector,
} from './embedding-engine.ts';
import { EmbeddingAnswerReader } from './embedding-answer-reader.ts';

/*
 * An OpenAI-compatible embedding server (vLLM, TEI, Infinity, Ollama, OpenAI): POST {baseUrl}/embeddings with
 * `{model, input: [...], encoding_format, dimensions?}` over one keep-alive pool. The caller's encoding is asked
 * for, and the vectors pass through untouched: base64 strings and arrays of numbers alike are lifted out of the
 * answer's bytes before the small rest is parsed, and go back out as those bytes (no string, no float parsing and
 * printing on the way); a server that ignores the encoding is converted. Failures are the chat adapter's
 * UpstreamErrors, so the gateway retries and falls back the same way.
 */

export const OPENAI_EMBEDDINGS_DEFAULT_TIMEOUT_MS = 60_000;
/** 2048 vectors of 4096 floats as JSON is ~150 MB; an answer above this is refused rather than buffered. */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
/** Literals and arrays this long are lifted out of an answer as bytes: a vector of 48 dimensions or more. */
const LIFT_MIN_BYTES = 256;
/** An error answer is read this far, for its message. */
const ERROR_BODY_BYTES = 64 * 1024;

interface SentCall {
  readonly response: Promise<{ statusCode: number; body: unknown }>;
  failure(error: unknown): AppError;
}

export interface OpenAIEmbeddingsSettings {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export class OpenAIEmbeddingsEngine implements EmbeddingEngine {
  readonly simulated = false;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(
    readonly id: string,
    private readonly settings: OpenAIEmbeddingsSettings,
  ) {
    const url = new URL(settings.baseUrl);
    this.path = `${url.pathname.replace(/\/+$/, '') || '/v1'}/embeddings`;
    this.pool = new (undici().Pool)(url.origin, {
      keepAliveTimeout: 30_000,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      connect: { timeout: Math.min(settings.timeoutMs, 10_000) },
    });
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...settings.headers,
      ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
    };
  }

  async embed(
    upstreamModel: string,
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingResult> {
    const call = this.send(upstreamModel, request, options.signal);
    const body = await this.answerBody(call);
    let bytes: Buffer;
    try {
      bytes = await readLimitedBytes(body, MAX_BODY_BYTES);
    } catch (error) {
      throw call.failure(error);
    }
    return readAnswer(parseLifted(bytes, LIFT_MIN_BYTES, { arrays: true }), request.inputs.length);
  }

  /**
   * The answer read as it arrives (embedding-answer-reader.ts): resolves with the first vectors, so that a failure
   * before them is an ordinary error the gateway can retry or fall back on; one after them ends the batches with it.
   */
  async embedStream(
    upstreamModel: string,
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingStream> {
    const call = this.send(upstreamModel, request, options.signal);
    const body = await this.answerBody(call);
    const reader = new EmbeddingAnswerReader(request.inputs.length);
    const pieces = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let received = 0;
    let ended = false;
    const next = async (): Promise<readonly IndexedVector[]> => {
      try {
        const piece = await pieces.next();
        if (piece.done) {
          ended = true;
          return reader.end();
        }
        // What has come meanwhile is taken in the same step: a burst is passed on in one write, not one per read.
        const vectors = [];
        for (let bytes: Buffer | null = piece.value; bytes !== null; bytes = body.read() as Buffer | null) {
          received += bytes.length;
          if (received > MAX_BODY_BYTES) throw brokenError('sent an embeddings answer too large to pass on');
          vectors.push(...reader.push(bytes));
        }
        return vectors;
      } catch (error) {
        ended = true;
        body.destroy();
        throw call.failure(error);
      }
    };
    let first: readonly IndexedVector[] = [];
    while (first.length === 0 && !ended) first = await next();
    return {
      batches: (async function* () {
        try {
          yield first;
          while (!ended) {
            const vectors = await next();
            if (vectors.length > 0) yield vectors;
          }
        } finally {
          // The caller stopped early (its client went away): the rest of the answer is not read.
          if (!ended) body.destroy();
        }
      })(),
      promptTokens: () => reader.promptTokens,
    };
  }

  /** The answer's body once the server has answered 200; another status is its error. */
  private async answerBody(call: SentCall): Promise<ResponseBody> {
    try {
      const response = await call.response;
      const body = response.body as ResponseBody;
      if (response.statusCode === 200) return body;
      const text = (await readLimitedBytes(body, ERROR_BODY_BYTES)).toString('utf8');
      throw upstreamStatusError(response.statusCode, upstreamErrorMessage(text), 'embedding server');
    } catch (error) {
      throw call.failure(error);
    }
  }

  /**
   * Sends the request; `failure` turns what the call threw into the error to report. The timeout is the pool's
   * (for the headers, then between pieces of the body), which costs no timer or signal of its own per call.
   */
  private send(upstreamModel: string, request: EmbeddingRequest, signal: AbortSignal | undefined): SentCall {
    if (signal?.aborted) throw cancelledError();
    const payload = {
      model: upstreamModel,
      input: request.inputs,
      encoding_format: request.preferred,
      ...(request.dimensions !== undefined && { dimensions: request.dimensions }),
    };
    return {
      response: this.pool.request({
        path: this.path,
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(payload),
        ...(signal && { signal }),
      }),
      failure: (error: unknown) => this.transportError(error, signal),
    };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private transportError(error: unknown, caller: AbortSignal | undefined): AppError {
    if (error instanceof AppError) return error;
    if (caller?.aborted) return cancelledError();
    const code = (error as { code?: unknown } | null)?.code;
    const detail = `${this.id}: ${typeof code === 'string' ? `${code} ` : ''}${error instanceof Error ? error.message : String(error)}`;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
      return timeoutError(this.settings.timeoutMs, 'answer', detail);
    return brokenError('could not be reached', detail);
  }
}

/**
 * The vectors of an answer in input order, and its token count. Checked by hand, not with a schema: a schema walks
 * every number of every float vector (65,536 of them for 64 inputs of 1,024 dimensions), and this is the hot path.
 */
function readAnswer(answer: LiftedJson | undefined, count: number): EmbeddingResult {
  const body = answer?.value as { data?: unknown; usage?: { prompt_tokens?: unknown } | null } | undefined;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.data))
    throw brokenError('sent an embeddings answer of the wrong shape');
  const data = body.data as unknown[];
  if (data.length !== count) throw brokenError(`sent ${data.length} vectors for ${count} inputs`);
  const vectors = new Array<EngineVector>(count);
  data.forEach((item, position) => {
    const { index = position, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || vectors[index])
      throw brokenError('sent vectors with bad indexes');
    const vector =
      typeof embedding === 'string'
        ? liftedVector(answer!, embedding)
        : Array.isArray(embedding) && embedding.length > 0 && typeof embedding[0] === 'number'
          ? (embedding as number[])
          : undefined;
    if (vector === undefined) throw brokenError('sent a vector that is neither numbers nor base64');
    vectors[index] = vector;
  });
  const tokens = body.usage?.prompt_tokens;
  return {
    vectors,
    promptTokens: typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : undefined,
  };
}

/**
 * A vector lifted out of the answer as its bytes: base64 text, or a flat array of numbers; else the parsed string.
 * The bytes go into Lagoon's answer unparsed, so they must be text JSON carries as it is: ASCII (checked at memory
 * speed), of a base64 length or opening on a number. That each character is in the alphabet, or each number well
 * formed, is the upstream's word, as it is for a base64 string that was parsed.
 */
function liftedVector(answer: LiftedJson, embedding: string): EngineVector | undefined {
  const array = answer.liftedArray(embedding);
  if (array !== undefined)
    return isAscii(array) && STARTS_WITH_NUMBER.test(array.toString('latin1', 0, 32))
      ? new FloatsJson(array)
      : undefined;
  const bytes = answer.liftedBytes(embedding);
  if (bytes === undefined) return embedding;
  return isAscii(bytes) && bytes.length % 4 === 0 ? new Base64Bytes(bytes) : undefined;
}

const STARTS_WITH_NUMBER = /^\[\s*-?\d/;
