/**
 * The embedding capability (src/providers/): one interface, one adapter per engine (the built-in feature-hashing
 * simulator, an OpenAI-compatible `/v1/embeddings` server such as vLLM, TEI, Infinity or Ollama). An engine turns
 * texts into vectors; validation against the catalog (dimensions, input sizes) and pricing belong to the
 * embedding service, the choice of engine to the embedding gateway.
 */

/** One vector as an engine hands it over: numbers, or the little-endian float32 bytes in base64 (OpenAI's form). */
export type EngineVector = readonly number[] | string;

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

export interface EmbeddingEngine {
  readonly id: string;
  readonly simulated: boolean;
  embed(
    upstreamModel: string,
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingResult>;
  close?(): Promise<void>;
}
