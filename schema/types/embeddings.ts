import { formatNano } from '../../src/billing/money.ts';
import { floatsOf, type EmbeddingOutcome } from '../../src/embeddings/embedding.service.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';
import { PAID_MEDIA_ERRORS } from './media.ts';

const EmbeddingVectorRef = builder
  .objectRef<{ readonly index: number; readonly embedding: number[] }>('EmbeddingVector')
  .implement({
    description: 'The vector of one input, in input order.',
    fields: (t) => ({
      index: t.exposeInt('index'),
      embedding: t.floatList({ resolve: (vector) => vector.embedding }),
    }),
  });

const EmbeddingsResultRef = builder.objectRef<EmbeddingOutcome>('EmbeddingsResult').implement({
  description: 'Embeddings of the inputs (as POST /api/v1/embeddings with encoding_format float).',
  fields: (t) => ({
    model: t.string({ description: 'The model id that answered.', resolve: (outcome) => outcome.list.model }),
    data: t.field({
      type: [EmbeddingVectorRef],
      resolve: (outcome) =>
        outcome.list.data.map((item) => ({ index: item.index, embedding: floatsOf(item.embedding) })),
    }),
    promptTokens: t.int({ description: 'Tokens billed.', resolve: (outcome) => outcome.list.usage.prompt_tokens }),
    simulated: t.boolean({
      description: 'Served by the built-in feature-hashing simulator, not a semantic model.',
      resolve: (outcome) => outcome.simulated,
    }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (outcome) => formatNano(outcome.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, resolve: (outcome) => outcome.charge.currency }),
  }),
});

const EmbeddingsInputRef = builder.inputType('EmbeddingsInput', {
  description: 'As the REST body of POST /api/v1/embeddings (float vectors only).',
  fields: (t) => ({
    model: t.string({ required: true, description: 'An embedding model id, trait or compatibility name.' }),
    input: t.stringList({ required: true, description: '1 to 2048 non-empty strings.' }),
    dimensions: t.int({ required: false, description: 'Only models with supportsCustomDimensions.' }),
  }),
});

// A mutation, not a query: it charges, and GET requests serve queries only.
builder.mutationFields((t) => ({
  createEmbeddings: t.field({
    type: EmbeddingsResultRef,
    description: 'Embeddings of 1 to 2048 texts. Priced per 1M input tokens; a failure costs nothing.',
    authScopes: { account: true },
    args: { input: t.arg({ type: EmbeddingsInputRef, required: true }) },
    errors: { types: PAID_MEDIA_ERRORS },
    resolve: (_root, { input }, context) =>
      context.services.embeddings.create(
        context.auth,
        {
          model: input.model,
          input: input.input,
          encoding_format: 'float',
          ...(input.dimensions !== null && input.dimensions !== undefined && { dimensions: input.dimensions }),
        },
        { signal: context.signal },
      ),
  }),
}));
