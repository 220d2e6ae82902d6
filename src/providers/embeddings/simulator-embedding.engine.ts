import type { EmbeddingEngine, EmbeddingRequest, EmbeddingResult } from './embedding-engine.ts';

/*
 * The built-in embedding engine: deterministic feature hashing, no model and no upstream. Each text's lowercased
 * words and character trigrams (padded words) are hashed (FNV-1a) into `dimensions` buckets with a hashed sign, and
 * the vector is scaled to unit length. Texts that share words and spellings share buckets, so similar texts have a
 * higher cosine than unrelated ones; it is not a semantic model (synonyms do not meet), and the catalog says so.
 * No real CPU embedding model ships its weights inside an npm package (transformers.js and its wrappers download
 * them from a model hub at run time), so this is the engine that needs nothing.
 */

export const SIMULATOR_DEFAULT_DIMENSIONS = 1_024;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(text: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The unit-length feature-hashing vector of `text` in `dimensions` buckets. */
export function hashedVector(text: string, dimensions: number): number[] {
  const vector = new Float64Array(dimensions);
  const add = (feature: string, weight: number) => {
    const hash = fnv1a(feature);
    // The low bits pick the bucket, the top bit the sign, so collisions cancel out on average.
    vector[hash % dimensions]! += hash & 0x80000000 ? -weight : weight;
  };
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    add(`w:${word}`, 1);
    const padded = `<${word}>`;
    for (let i = 0; i + 3 <= padded.length; i += 1) add(`t:${padded.slice(i, i + 3)}`, 0.5);
  }
  if (words.length === 0) add(`raw:${text}`, 1);
  let norm = 0;
  for (const value of vector) norm += value * value;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Array.from(vector, (value) => value * scale);
}

export class SimulatorEmbeddingEngine implements EmbeddingEngine {
  readonly simulated = true;

  constructor(
    readonly id: string,
    private readonly nativeDimensions = SIMULATOR_DEFAULT_DIMENSIONS,
  ) {}

  embed(_upstreamModel: string, request: EmbeddingRequest): Promise<EmbeddingResult> {
    const dimensions = request.dimensions ?? request.nativeDimensions ?? this.nativeDimensions;
    return Promise.resolve({ vectors: request.inputs.map((text) => hashedVector(text, dimensions)) });
  }
}
