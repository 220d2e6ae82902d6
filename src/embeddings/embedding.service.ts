import { modelPrivacyOf, type AccountAuthContext, type AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import type { PaidCall } from '../billing/paid-call.ts';
import type { CatalogModel } from '../catalog/model.ts';
import type { CatalogService } from '../catalog/catalog.service.ts';
import { ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import {
  Base64Bytes,
  FloatsJson,
  type EmbeddingRequest,
  type EngineVector,
} from '../providers/embeddings/embedding-engine.ts';
import type {
  EmbeddingGateway,
  EmbeddingGatewayResult,
  EmbeddingGatewayStream,
} from '../providers/embeddings/embedding-gateway.ts';
import type { Admission, RateLimiter } from '../rate-limits/rate-limiter.ts';
import { countTexts } from '../token-count-pool.ts';
import { countTextTokens } from '../tokenizer.ts';
import { parseInput } from '../validation.ts';
import { resolveTypedModel } from '../catalog/typed-model.ts';
import { embeddingCost, embeddingUsage } from './embedding-pricing.ts';
import { EmbeddingInput, refuseTokenArrays } from './embedding.inputs.ts';

/** One vector of the answer; it may be the upstream's own bytes (Base64Bytes, FloatsJson), written as they came. */
export interface EmbeddingItem {
  readonly object: 'embedding';
  readonly embedding: number[] | string | Base64Bytes | FloatsJson;
  readonly index: number;
}

/** The OpenAI embeddings answer, as REST sends it and GraphQL exposes it; floatsOf() reads any vector as numbers. */
export interface EmbeddingList {
  readonly object: 'list';
  readonly data: readonly EmbeddingItem[];
  readonly model: string;
  readonly usage: EmbeddingTokens;
}

export interface EmbeddingTokens {
  readonly prompt_tokens: number;
  readonly total_tokens: number;
}

export interface EmbeddingOutcome {
  readonly list: EmbeddingList;
  readonly charge: SettledCharge;
  /** Served by the built-in feature-hashing simulator (not a semantic model). */
  readonly simulated: boolean;
}

/**
 * An answer passed on as it comes: the vectors in input order, in batches, then the usage, which is yielded once the
 * call has been charged. A stream left early (the client went away) or broken off charges nothing.
 */
export interface EmbeddingStreamOutcome {
  readonly model: string;
  readonly parts: AsyncIterable<{ readonly items: readonly EmbeddingItem[] } | { readonly usage: EmbeddingTokens }>;
}

interface EmbeddingSpec {
  readonly embeddingDimensions?: number;
  readonly maxInputTokens?: number;
  readonly supportsCustomDimensions?: boolean;
}

/** A validated call, before anything is held. */
interface PreparedCall {
  readonly account: AccountAuthContext;
  readonly model: CatalogModel;
  readonly request: EmbeddingRequest;
  /** The most tokens the inputs can be: the hold's size. */
  readonly bound: number;
  /** The rate limiter's estimate, corrected once the count is known. */
  readonly estimate: number;
  readonly admission: Admission | undefined;
  readonly started: number;
}

/** English text averages about 4 characters per o200k token (the TPM estimate before the count). */
const CHARS_PER_TOKEN = 4;
/** Special tokens an upstream may add to each input (BOS, EOS, a separator, an instruction marker). */
const SPECIAL_TOKENS = 4;

const fieldError = (field: string, message: string) =>
  new ValidationError(`Invalid request: ${field}: ${message}`, [{ path: [field], message }]);

/**
 * Embeddings (POST /embeddings, GraphQL createEmbeddings): validates the request against the model
 * (dimensions, per-input token limit), holds the most it can cost (one token per UTF-8 byte), runs the engine
 * through the gateway and settles on the engine's token count (or the o200k count when it reports none), per 1M
 * input tokens. `create` answers whole; `createStreaming` passes an upstream's vectors on as they arrive.
 */
export class EmbeddingService {
  constructor(
    private readonly deps: {
      billing: BillingService;
      catalog: CatalogService;
      gateway: EmbeddingGateway;
      logger: Logger;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {}

  async create(auth: AuthContext, raw: unknown, options: { signal?: AbortSignal } = {}): Promise<EmbeddingOutcome> {
    const call = await this.prepare(auth, raw);
    // An engine that fails, or a count that fails, releases the hold: nothing is charged.
    return this.deps.billing.paidCall(call.account, embeddingCost(call.model, call.bound), async (paid) =>
      this.settleWhole(call, paid, await this.deps.gateway.embed(call.model.providers, call.request, options)),
    );
  }

  /**
   * The same call, answered as a stream when the engine reads its answer as one (an OpenAI-compatible server), else
   * whole. A failure before the first vectors is an error as for `create`; one after them breaks the stream off.
   */
  async createStreaming(
    auth: AuthContext,
    raw: unknown,
    options: { signal?: AbortSignal } = {},
  ): Promise<EmbeddingOutcome | EmbeddingStreamOutcome> {
    const call = await this.prepare(auth, raw);
    return this.deps.billing.paidCall(call.account, embeddingCost(call.model, call.bound), async (paid) => {
      const result = await this.deps.gateway.embedStreaming(call.model.providers, call.request, options);
      if (!('stream' in result)) return this.settleWhole(call, paid, result);
      return { model: call.model.id, parts: this.streamed(call, paid.handOff(), result) };
    });
  }

  close(): Promise<void> {
    return this.deps.gateway.close();
  }

  private async prepare(auth: AuthContext, raw: unknown): Promise<PreparedCall> {
    const account = requireAccount(auth);
    refuseTokenArrays(raw);
    const input = parseInput(EmbeddingInput, raw);
    const model = await resolveTypedModel(
      this.deps.catalog,
      { name: input.model, type: 'embedding', purpose: 'embeddings' },
      modelPrivacyOf(account),
    );
    const spec = model.spec as EmbeddingSpec;
    if (input.dimensions !== undefined) {
      if (spec.supportsCustomDimensions !== true)
        throw fieldError('dimensions', `Model ${model.id} does not take dimensions (no supportsCustomDimensions)`);
      if (spec.embeddingDimensions !== undefined && input.dimensions > spec.embeddingDimensions)
        throw fieldError('dimensions', `Model ${model.id} has ${spec.embeddingDimensions} dimensions at most`);
    }
    const inputs = typeof input.input === 'string' ? [input.input] : input.input;
    checkInputLengths(inputs, spec.maxInputTokens ?? model.contextLength ?? undefined);
    // The hold needs no tokenizer: subword tokenizers give at most one token per UTF-8 byte, plus the special
    // tokens (BOS, EOS) an upstream may count per input.
    const bound = inputs.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8') + SPECIAL_TOKENS, 0);
    // TPM takes an estimate now (no tokenizer on the way in: the added latency stays small) and the count's
    // difference once it is known. Counted before the hold: a refused call (429) is never charged.
    const estimate = inputs.reduce((sum, text) => sum + Math.ceil(text.length / CHARS_PER_TOKEN), 0);
    const admission = await this.deps.rateLimiter?.admit(account, model, estimate);
    const request: EmbeddingRequest = {
      inputs,
      dimensions: input.dimensions,
      nativeDimensions: spec.embeddingDimensions,
      preferred: input.encoding_format,
    };
    return { account, model, request, bound, estimate, admission, started: performance.now() };
  }

  private async settleWhole(
    call: PreparedCall,
    paid: PaidCall,
    result: EmbeddingGatewayResult,
  ): Promise<EmbeddingOutcome> {
    const tokens = await this.tokensOf(call, result.promptTokens);
    const charge = await paid.settle(this.usage(call, tokens, result.providerId));
    call.admission?.recordTokens(tokens - call.estimate);
    const encode = encoderFor(call.request.preferred);
    return {
      list: {
        object: 'list',
        data: result.vectors.map((vector, index) => ({ object: 'embedding', embedding: encode(vector), index })),
        model: call.model.id,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
      charge,
      simulated: result.simulated,
    };
  }

  private async *streamed(
    call: PreparedCall,
    paid: PaidCall,
    { stream, providerId }: EmbeddingGatewayStream,
  ): AsyncGenerator<{ items: readonly EmbeddingItem[] } | { usage: EmbeddingTokens }> {
    paid.keepAlive();
    try {
      const encode = encoderFor(call.request.preferred);
      for await (const batch of stream.batches)
        yield {
          items: batch.map(({ index, vector }) => ({ object: 'embedding' as const, embedding: encode(vector), index })),
        };
      const tokens = await this.tokensOf(call, stream.promptTokens());
      await paid.settle(this.usage(call, tokens, providerId));
      call.admission?.recordTokens(tokens - call.estimate);
      yield { usage: { prompt_tokens: tokens, total_tokens: tokens } };
    } finally {
      // Left early (the client went away) or broken off: nothing was charged, the hold goes back.
      await paid.release();
    }
  }

  /** The engine's count; an engine that reports none (the simulator, some servers) is billed on the o200k count. */
  private async tokensOf(call: PreparedCall, reported: number | undefined): Promise<number> {
    return reported ?? (await countTexts(call.request.inputs));
  }

  private usage(call: PreparedCall, tokens: number, providerId: string) {
    return embeddingUsage(call.model, tokens, {
      requestId: call.account.requestId,
      executionTimeMs: Math.round(performance.now() - call.started),
      inputs: call.request.inputs.length,
      providerId,
    });
  }
}

/**
 * Each input within the model's per-input limit. o200k is byte-level, so a text has at most 3 tokens per UTF-16
 * unit: only texts that could pass the limit are counted.
 */
function checkInputLengths(inputs: readonly string[], maxTokens: number | undefined): void {
  if (maxTokens === undefined) return;
  inputs.forEach((text, index) => {
    if (text.length * 3 <= maxTokens) return;
    const tokens = countTextTokens(text);
    if (tokens > maxTokens)
      throw new ValidationError(
        `Invalid request: input.${index}: ${tokens} tokens; the model takes ${maxTokens} at most`,
        [{ path: ['input', index], message: `${tokens} tokens; the model takes ${maxTokens} at most` }],
      );
  });
}

const encoderFor = (encoding: 'float' | 'base64') => (encoding === 'base64' ? toBase64 : toFloats);

function toBase64(vector: EngineVector): string | Base64Bytes {
  if (typeof vector === 'string' || vector instanceof Base64Bytes) return vector;
  const numbers = vector instanceof FloatsJson ? vector.numbers() : vector;
  return Buffer.from(Float32Array.from(numbers).buffer).toString('base64');
}

function toFloats(vector: EngineVector): number[] | FloatsJson {
  if (vector instanceof FloatsJson) return vector;
  return floatsOf(vector);
}

/** A vector in any of its forms as numbers. */
export function floatsOf(vector: EngineVector): number[] {
  if (Array.isArray(vector)) return vector as number[];
  if (vector instanceof FloatsJson) return vector.numbers();
  const text = vector instanceof Base64Bytes ? vector.text() : (vector as string);
  // A copy: Buffer's pooled memory need not start on a 4-byte boundary, which Float32Array requires.
  const bytes = new Uint8Array(Buffer.from(text, 'base64'));
  const floats = new Float32Array(bytes.buffer, 0, Math.floor(bytes.byteLength / 4));
  return Array.from(floats);
}
