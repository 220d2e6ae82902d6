/**
 * The embedding capability (src/providers/): one interface, one adapter per engine (the built-in feature-hashing
 * simulator, an OpenAI-compatible `/v1/embeddings` server such as vLLM, TEI, Infinity or Ollama). An engine turns
 * texts into vectors; validation against the catalog (dimensions, input sizes) and pricing belong to the
 * embedding service, the choice of engine to the embedding gateway.
 */

/**
 * A vector's base64 text as an upstream's answer held it (ASCII, no escapes): Lagoon's answer carries these bytes
 * as they came, so a batch of vectors never becomes strings on the way through (src/providers/lifted-json.ts).
 */
export class Base64Bytes {
  constructor(readonly ascii: Buffer) {}

  text(): string {
    return this.ascii.toString('latin1');
  }
}

/** A float vector's JSON text (`[0.1,…]`) as an upstream's answer held it, carried the same way. */
export class FloatsJson {
  constructor(readonly ascii: Buffer) {}

  numbers(): number[] {
    return JSON.parse(this.ascii.toString('latin1')) as number[];
  }
}

/**
 * One vector as an engine hands it over: numbers, or the little-endian float32 bytes in base64 (OpenAI's form) as
 * a string; or either as the upstream's own bytes.
 */
export type EngineVector = readonly number[] | string | Base64Bytes | FloatsJson;

export interface EmbeddingRequest {
  readonly inputs: readonly string[];
  /** Truncate to this size (models with supportsCustomDimensions); absent: the model's native size. */
  readonly dimensions?: number | undefined;
  /** The model's native size (the catalog's embeddingDimensions), for engines that build vectors themselves. */
  readonly nativeDimensions?: number | undefined;
  /** The form the caller wants: an engine may answer in it to spare a conversion (either form is accepted). */
  readonly preferred: 'float' | 'base64';
}

export interface EmbeddingResult {
  /** In input order. */
  readonly vectors: readonly EngineVector[];
  /** The engine's own prompt token count, when it reports one. */
  readonly promptTokens?: number | undefined;
}

/** One vector of an answer and the input it belongs to. */
export interface IndexedVector {
  readonly index: number;
  readonly vector: EngineVector;
}

/** An answer whose vectors are passed on as they arrive, before the rest of it has come. */
export interface EmbeddingStream {
  /** The vectors in input order, in batches as they come (the first one has come already); ends with the answer. */
  readonly batches: AsyncIterable<readonly IndexedVector[]>;
  /** The engine's own prompt token count, once `batches` has ended (undefined when it reported none). */
  promptTokens(): number | undefined;
}

export interface EmbeddingEngine {
  readonly id: string;
  readonly simulated: boolean;
  embed(
    upstreamModel: string,
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingResult>;
  /** The same call answered as a stream: resolves once the first vectors have come (engines that can). */
  embedStream?(
    upstreamModel: string,
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingStream>;
  close?(): Promise<void>;
}
