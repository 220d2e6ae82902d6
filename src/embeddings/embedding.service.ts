import { modelPrivacyOf, type AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import type { CatalogService } from '../catalog/catalog.service.ts';
import { ValidationError } from '../errors.ts';
import { Base64Bytes, FloatsJson, type EngineVector } from '../providers/embeddings/embedding-engine.ts';
import type { EmbeddingGateway } from '../providers/embeddings/embedding-gateway.ts';
import type { RateLimiter } from '../rate-limits/rate-limiter.ts';
import { countTexts } from '../token-count-pool.ts';
import { countTextTokens } from '../tokenizer.ts';
import { parseInput } from '../validation.ts';
import { resolveTypedModel } from '../catalog/typed-model.ts';
import { embeddingCost, embeddingUsage } from './embedding-pricing.ts';
import { EmbeddingInput, refuseTokenArrays } from './embedding.inputs.ts';

/**
 * The OpenAI embeddings answer, as REST sends it and GraphQL exposes it. A vector may be the upstream's own bytes
 * (Base64Bytes, FloatsJson), which REST writes as they came; floatsOf() reads any as numbers.
 */
export interface EmbeddingList {
  readonly object: 'list';
  readonly data: readonly {
    readonly object: 'embedding';
    readonly embedding: number[] | string | Base64Bytes | FloatsJson;
    readonly index: number;
  }[];
  readonly model: string;
  readonly usage: { readonly prompt_tokens: number; readonly total_tokens: number };
}

export interface EmbeddingOutcome {
  readonly list: EmbeddingList;
  readonly charge: SettledCharge;
  /** Served by the built-in feature-hashing simulator (not a semantic model). */
  readonly simulated: boolean;
}

interface EmbeddingSpec {
  readonly embeddingDimensions?: number;
  readonly maxInputTokens?: number;
  readonly supportsCustomDimensions?: boolean;
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
 * input tokens.
 */
export class EmbeddingService {
  constructor(
    private readonly deps: {
      billing: BillingService;
      catalog: CatalogService;
      gateway: EmbeddingGateway;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {}

  async create(auth: AuthContext, raw: unknown, options: { signal?: AbortSignal } = {}): Promise<EmbeddingOutcome> {
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
    const started = performance.now();
    let counted: number | undefined;
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: embeddingCost(model, bound),
      run: async () => {
        const answer = await this.deps.gateway.embed(
          model.providers,
          {
            inputs,
            dimensions: input.dimensions,
            nativeDimensions: spec.embeddingDimensions,
            preferred: input.encoding_format,
          },
          { signal: options.signal },
        );
        // An engine that reports no count (the simulator, some servers) is billed on the o200k count.
        counted = answer.promptTokens ?? (await countTexts(inputs));
        return answer;
      },
      usage: () =>
        embeddingUsage(model, counted ?? bound, {
          requestId: account.requestId,
          executionTimeMs: Math.round(performance.now() - started),
          inputs: inputs.length,
        }),
    });
    const tokens = counted ?? bound;
    admission?.recordTokens(tokens - estimate);
    const encode = input.encoding_format === 'base64' ? toBase64 : toFloats;
    return {
      list: {
        object: 'list',
        data: result.vectors.map((vector, index) => ({ object: 'embedding', embedding: encode(vector), index })),
        model: model.id,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
      charge,
      simulated: result.simulated,
    };
  }

  close(): Promise<void> {
    return this.deps.gateway.close();
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
