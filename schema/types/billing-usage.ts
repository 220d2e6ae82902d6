import { encodeCursor } from '../../src/billing/usage.service.ts';
import type { UsageEntry, UsageEntryDetails } from '../../src/billing/usage.types.ts';
import { formatNano } from '../../src/billing/money.ts';
import { NotFoundError } from '../../src/errors.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { ApiKeyRef } from './api-keys.ts';
import { CurrencyEnum } from './enums.ts';

const InferenceDetailsRef = builder.objectRef<UsageEntryDetails>('InferenceDetails').implement({
  fields: (t) => ({
    requestId: t.exposeString('requestId'),
    inferenceExecutionTime: t.exposeFloat('inferenceExecutionTime', { description: 'Milliseconds.' }),
    promptTokens: t.int({ nullable: true, description: 'LLM usage only.', resolve: (d) => d.promptTokens ?? null }),
    completionTokens: t.int({
      nullable: true,
      description: 'LLM usage only.',
      resolve: (d) => d.completionTokens ?? null,
    }),
  }),
});

export const UsageEntryRef = builder.objectRef<UsageEntry>('UsageEntry').implement({
  description: 'One line of the usage ledger (REST: a billing usage entry).',
  fields: (t) => ({
    id: t.exposeID('id'),
    timestamp: t.field({ type: 'DateTime', description: 'When the entry was created.', resolve: (e) => e.createdAt }),
    sku: t.exposeString('sku', { description: 'The product billed.' }),
    pricePerUnitUsd: t.field({ type: 'Decimal', resolve: (e) => e.pricePerUnitUsd }),
    units: t.float({ description: 'Units consumed.', resolve: (e) => Number(e.units) }),
    amount: t.field({
      type: 'Decimal',
      description: 'Charged, in `currency`; negative for charges.',
      resolve: (e) => formatNano(e.amount),
    }),
    currency: t.field({ type: CurrencyEnum, resolve: (e) => e.currency }),
    notes: t.exposeString('notes'),
    apiKeyId: t.id({
      nullable: true,
      description: 'The key that made the call; null for the web app.',
      resolve: (e) => e.apiKeyId,
    }),
    apiKey: t.field({
      type: ApiKeyRef,
      nullable: true,
      description:
        'The key that made the call while it is active; null for the web app or a revoked key. Batched: one query for all entries.',
      resolve: (e, _args, context) => keyOf(e, context),
    }),
    modelId: t.string({ nullable: true, resolve: (e) => e.modelId }),
    modelType: t.string({ nullable: true, resolve: (e) => e.modelType }),
    lineType: t.string({
      nullable: true,
      description: 'Input, Output, Cache Read, Cache Write…',
      resolve: (e) => e.lineType,
    }),
    inferenceDetails: t.field({ type: InferenceDetailsRef, nullable: true, resolve: (e) => e.inferenceDetails }),
  }),
});

/**
 * Through the ApiKey dataloader (one query for every entry of the request). Only a key of the caller's own
 * account links: the entry's account is checked here, and the loader reads only the caller's active keys.
 */
async function keyOf(entry: UsageEntry, context: GraphQLContext) {
  if (entry.apiKeyId === null || context.auth.kind !== 'apiKey' || entry.accountId !== context.auth.accountId)
    return null;
  try {
    return await ApiKeyRef.getDataloader(context).load(entry.apiKeyId);
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

const SortOrderEnum = builder.enumType('UsageSortOrder', {
  values: {
    ASC: { value: 'asc', description: 'Oldest first.' },
    DESC: { value: 'desc', description: 'Newest first.' },
  } as const,
});

const UsageFilterRef = builder.inputType('UsageFilter', {
  fields: (t) => ({
    currency: t.field({ type: CurrencyEnum, required: false }),
    apiKeyId: t.id({ required: false, description: 'Only entries of this API key.' }),
    modelId: t.string({ required: false, description: 'Only entries of this model id.' }),
    modelType: t.string({
      required: false,
      description:
        'Only entries of this model type, as entries record it in `UsageEntry.modelType` (LLM, IMAGE, TTS, ASR, VIDEO…); an unknown type matches nothing.',
    }),
    startDate: t.field({ type: 'DateTime', required: false, description: 'Entries created at or after this instant.' }),
    endDate: t.field({ type: 'DateTime', required: false, description: 'Entries created at or before this instant.' }),
    sortOrder: t.field({
      type: SortOrderEnum,
      required: false,
      description: 'By creation time, ties by id; default DESC.',
    }),
  }),
});

builder.queryFields((t) => ({
  usage: t.connection(
    {
      type: UsageEntryRef,
      description:
        'Usage entries of the caller’s account (ADMIN keys only): `first` (1–500, default 200) after a cursor, or `last` before one.',
      authScopes: { admin: true },
      args: { filter: t.arg({ type: UsageFilterRef, required: false }) },
      resolve: async (_root, args, context) => {
        const filter = args.filter ?? {};
        const connection = await context.services.usage.connection(
          context.auth,
          {
            currency: filter.currency,
            apiKeyId: filter.apiKeyId ?? undefined,
            modelId: filter.modelId ?? undefined,
            modelType: filter.modelType ?? undefined,
            startDate: filter.startDate?.toISOString(),
            endDate: filter.endDate?.toISOString(),
            sortOrder: filter.sortOrder,
          },
          { first: args.first, last: args.last, after: args.after, before: args.before },
        );
        const edges = connection.entries.map((entry) => ({ cursor: encodeCursor(entry), node: entry }));
        return {
          edges,
          pageInfo: {
            hasNextPage: connection.hasNextPage,
            hasPreviousPage: connection.hasPreviousPage,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
          totalCount: connection.totalCount,
        };
      },
    },
    {
      name: 'UsageConnection',
      fields: (tc) => ({
        totalCount: tc.int({
          description: 'Entries matching the filter (all pages).',
          resolve: (connection) => connection.totalCount(),
        }),
      }),
    },
  ),
}));

builder.subscriptionFields((t) => ({
  usageUpdated: t.field({
    type: UsageEntryRef,
    description:
      'Each new usage entry of the caller’s account as its charge settles (ADMIN keys only; SSE at /graphql/stream).',
    authScopes: { admin: true },
    subscribe: (_root, _args, context) => context.services.usage.subscribe(context.auth),
    resolve: (entry) => entry,
  }),
}));

const UsageHistoryPageRef = builder
  .objectRef<{ entries: readonly UsageEntry[]; nextCursor: string | null }>('UsageHistoryPage')
  .implement({
    description: 'One page of the usage ledger in ascending time order (REST: GET /billing/usage-history).',
    fields: (t) => ({
      entries: t.field({ type: [UsageEntryRef], resolve: (page) => page.entries }),
      nextCursor: t.string({
        nullable: true,
        description: 'Pass it alone as `cursor` for the next page; null on the last page.',
        resolve: (page) => page.nextCursor,
      }),
    }),
  });

builder.queryFields((t) => ({
  usageHistory: t.field({
    type: UsageHistoryPageRef,
    description:
      'The usage ledger walked by cursor, oldest first (ADMIN keys only). The first page takes the filters; later pages take only `cursor`, which carries them.',
    authScopes: { admin: true },
    args: {
      currency: t.arg({ type: CurrencyEnum, required: false }),
      startTimestamp: t.arg.string({ required: false, description: 'Inclusive, UTC date-time ending in Z' }),
      endTimestamp: t.arg.string({ required: false, description: 'Exclusive, UTC date-time ending in Z' }),
      pageSize: t.arg.int({ required: false, description: '10 to 1000, default 1000' }),
      cursor: t.arg.string({ required: false }),
    },
    resolve: (_root, args, context) =>
      context.services.usageHistory.page(context.auth, {
        currency: args.currency ?? undefined,
        startTimestamp: args.startTimestamp ?? undefined,
        endTimestamp: args.endTimestamp ?? undefined,
        pageSize: args.pageSize ?? undefined,
        cursor: args.cursor ?? undefined,
      }),
  }),
}));
