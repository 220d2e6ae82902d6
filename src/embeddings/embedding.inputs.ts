import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { storedString } from '../validation.ts';

/** Most inputs in one request (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2_048;

/** POST /embeddings (and GraphQL createEmbeddings): a closed body; model rules are checked after. */
export const EmbeddingInput = z.strictObject({
  model: storedString()
    .min(1)
    .max(200)
    .optional()
    .describe('An embedding model id, trait or compatibility name; default: the default embedding model'),
  input: z
    .union([z.string().min(1), z.array(z.string().min(1, 'Inputs must not be empty')).min(1).max(MAX_EMBEDDING_INPUTS)])
    .describe('A string, or 1 to 2048 strings; each at most the model maxInputTokens'),
  encoding_format: z.enum(['float', 'base64']).default('float').describe('float (default) or base64 (float32 LE)'),
  dimensions: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Fewer dimensions than the native size; only models with supportsCustomDimensions'),
  user: z.string().max(256).optional().describe('Accepted and ignored (OpenAI compatibility)'),
});
export type EmbeddingInput = z.output<typeof EmbeddingInput>;

/** Token arrays (OpenAI accepts integer ids) are refused with a message that says so, before the schema runs. */
export function refuseTokenArrays(raw: unknown): void {
  if (typeof raw !== 'object' || raw === null) return;
  const input = (raw as { input?: unknown }).input;
  if (!Array.isArray(input)) return;
  const tokens = input.some((item) => typeof item === 'number' || Array.isArray(item));
  if (tokens) {
    const message = 'Token arrays are not accepted; send the text as a string or an array of strings';
    throw new ValidationError(`Invalid request: input: ${message}`, [{ path: ['input'], message }]);
  }
}
