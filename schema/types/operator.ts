import type { CurrencyAmount, OperatorAccount, OperatorAdjustment } from '../../src/operator/operator.service.ts';
import type { QueueDepthRow } from '../../src/operator/operator-accounts.repository.ts';
import type { JobQueueSnapshot } from '../../src/operator/operator.service.ts';
import type { UpstreamErrorRecord, UpstreamHealthSnapshot } from '../../src/providers/upstream-activity.ts';
import type { JobStatus } from '../../src/media/jobs/jobs.repository.ts';
import type { JobKind } from '../../src/providers/jobs/job-engine.ts';
import { formatNano, type Currency } from '../../src/billing/money.ts';
import {
  AuthenticationError,
  ForbiddenError,
  InsufficientBalanceError,
  NotFoundError,
  ValidationError,
} from '../../src/errors.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { Balance } from './account.ts';
import { UsageAnalyticsRef } from './billing-analytics.ts';
import { CurrencyEnum } from './enums.ts';
import { JobKindEnum, JobStatusEnum } from './jobs.ts';

/*
 * The operator operations: every root field here takes an operator token (`lagoon operator-tokens create`) and
 * nothing else. An account's own ADMIN key is not an operator and is refused like any other account credential.
 */
const operatorOnly = {
  authScopes: { operator: true },
  unauthorizedError: (_parent: unknown, _args: unknown, context: GraphQLContext) =>
    context.auth.kind === 'anonymous'
      ? new AuthenticationError('Authentication required: send Authorization: Bearer <operator token>')
      : new ForbiddenError('An operator token is required; account keys and wallets cannot use operator fields'),
} as const;

const CurrencyAmountRef = builder.objectRef<CurrencyAmount>('CurrencyAmount').implement({
  fields: (t) => ({
    currency: t.exposeString('currency'),
    amount: t.field({ type: 'Decimal', resolve: (value) => formatNano(value.amount) }),
  }),
});

const OperatorAccountRef = builder.objectRef<OperatorAccount>('OperatorAccount').implement({
  description: 'An account as the operator sees it.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    kind: t.exposeString('kind', { description: '`standard` or `wallet`.' }),
    walletAddress: t.exposeString('walletAddress', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    activeKeyCount: t.exposeInt('activeKeyCount', { description: 'API keys not revoked.' }),
    balances: t.field({ type: [Balance], resolve: (account) => [...account.balances] }),
    spendToday: t.field({
      type: [CurrencyAmountRef],
      description: 'Spend since 00:00 UTC, per currency.',
      resolve: (account) => [...account.spendToday],
    }),
    spendLast30Days: t.field({
      type: [CurrencyAmountRef],
      description: 'Spend over the 30 UTC days up to today, per currency.',
      resolve: (account) => [...account.spendLast30Days],
    }),
  }),
});

const OperatorAdjustmentRef = builder.objectRef<OperatorAdjustment>('OperatorAdjustment').implement({
  description: 'A credit or debit the operator made: its ledger entry.',
  fields: (t) => ({
    accountId: t.exposeID('accountId'),
    ledgerEntryId: t.exposeID('ledgerEntryId'),
    currency: t.field({ type: CurrencyEnum, resolve: (value) => value.currency }),
    amount: t.field({
      type: 'Decimal',
      description: 'Signed: negative for a debit.',
      resolve: (value) => formatNano(value.amount),
    }),
    balanceAfter: t.field({ type: 'Decimal', resolve: (value) => formatNano(value.balanceAfter) }),
    reason: t.exposeString('reason'),
    operatorTokenId: t.exposeID('operatorTokenId', { nullable: true }),
  }),
});

const UpstreamStateEnum = builder.enumType('UpstreamState', { values: ['HEALTHY', 'COOLING_DOWN'] as const });

const UpstreamErrorRef = builder.objectRef<UpstreamErrorRecord>('UpstreamErrorRecord').implement({
  fields: (t) => ({
    at: t.expose('at', { type: 'DateTime' }),
    operation: t.exposeString('operation'),
    outcome: t.exposeString('outcome', { description: '`timeout`, `error`, `rejected` or `broken`.' }),
    message: t.exposeString('message'),
  }),
});

const UpstreamHealthRef = builder.objectRef<UpstreamHealthSnapshot>('UpstreamHealth').implement({
  description: 'One provider’s health as this server process saw it since it started.',
  fields: (t) => ({
    providerId: t.exposeID('providerId'),
    state: t.field({
      type: UpstreamStateEnum,
      resolve: (health) => (health.coolingDownUntil ? 'COOLING_DOWN' : 'HEALTHY'),
    }),
    coolingDownUntil: t.expose('coolingDownUntil', { type: 'DateTime', nullable: true }),
    calls: t.exposeInt('calls', { description: 'Attempts since the process started.' }),
    failures: t.exposeInt('failures', { description: 'Failed attempts since the process started.' }),
    recentLatencyMs: t.exposeFloat('recentLatencyMs', {
      nullable: true,
      description: 'Mean duration of the last 20 successful attempts.',
    }),
    lastLatencyMs: t.exposeFloat('lastLatencyMs', { nullable: true }),
    recentErrors: t.field({
      type: [UpstreamErrorRef],
      description: 'The last 20 failed attempts, newest first.',
      resolve: (health) => [...health.recentErrors],
    }),
  }),
});

const QueueDepthRef = builder.objectRef<QueueDepthRow>('JobQueueDepth').implement({
  fields: (t) => ({
    status: t.field({ type: JobStatusEnum, resolve: (row) => row.status as JobStatus }),
    kind: t.field({ type: JobKindEnum, resolve: (row) => row.kind as JobKind }),
    modelId: t.exposeString('modelId'),
    jobs: t.exposeInt('jobs'),
    oldestCreatedAt: t.expose('oldestCreatedAt', { type: 'DateTime' }),
  }),
});

const JobQueueRef = builder.objectRef<JobQueueSnapshot>('JobQueue').implement({
  description: 'Unfinished jobs (QUEUED and PROCESSING) of every account.',
  fields: (t) => ({
    queued: t.exposeInt('queued'),
    processing: t.exposeInt('processing'),
    oldestWaitingSeconds: t.exposeFloat('oldestWaitingSeconds', {
      nullable: true,
      description: 'How long the oldest QUEUED job has waited (null: none waits).',
    }),
    depth: t.field({
      type: [QueueDepthRef],
      description: 'Per state, kind and model.',
      resolve: (queue) => [...queue.depth],
    }),
  }),
});

builder.queryFields((t) => ({
  operatorAccounts: t.connection(
    {
      ...operatorOnly,
      type: OperatorAccountRef,
      description:
        'Every account, newest first (operator token only). `search` matches an account id, name or wallet address, or a key’s id, last six characters or description. `first`: 1–100, default 20.',
      args: { search: t.arg.string({ required: false }) },
      resolve: async (_root, args, context) => {
        if (args.last != null || args.before != null)
          throw new ValidationError('operatorAccounts pages forwards only: use first and after');
        const page = await context.services.operator.accounts(context.auth, {
          search: args.search,
          first: args.first,
          after: args.after,
        });
        const edges = page.accounts.map((node, index) => ({ cursor: page.cursors[index] ?? '', node }));
        return {
          edges,
          pageInfo: {
            hasNextPage: page.hasNextPage,
            hasPreviousPage: args.after != null,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      },
    },
    { name: 'OperatorAccountConnection' },
  ),
  operatorUsage: t.field({
    ...operatorOnly,
    type: UsageAnalyticsRef,
    description: 'Usage analytics summed over every account (operator token only); the arguments of `usageAnalytics`.',
    args: {
      lookback: t.arg.string({ required: false }),
      startDate: t.arg.string({ required: false }),
      endDate: t.arg.string({ required: false }),
    },
    resolve: (_root, args, context) =>
      context.services.operator.usage(context.auth, {
        lookback: args.lookback,
        startDate: args.startDate,
        endDate: args.endDate,
      }),
  }),
  operatorUpstreamHealth: t.field({
    ...operatorOnly,
    type: [UpstreamHealthRef],
    description:
      'Per provider: state, recent latency and errors, as this server process saw them (operator token only).',
    resolve: (_root, _args, context) => context.services.operator.upstreamHealth(context.auth),
  }),
  operatorJobQueue: t.field({
    ...operatorOnly,
    type: JobQueueRef,
    description: 'The job queue’s depth per state and model, and the oldest waiting job’s age (operator token only).',
    resolve: (_root, _args, context) => context.services.operator.jobQueue(context.auth),
  }),
}));

const adjustmentArgs = (t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0]) => ({
  accountId: t.arg.id({ required: true }),
  currency: t.arg({ type: CurrencyEnum, required: true }),
  amount: t.arg({ type: 'Decimal', required: true, description: 'Positive decimal, e.g. "12.5".' }),
  reason: t.arg.string({ required: true, description: 'Kept in the ledger entry (1–500 characters).' }),
});

const adjustmentInput = (args: { accountId: string | number; currency: Currency; amount: string; reason: string }) => ({
  accountId: String(args.accountId),
  currency: args.currency,
  amount: args.amount,
  reason: args.reason,
});

builder.mutationFields((t) => ({
  operatorCredit: t.field({
    ...operatorOnly,
    type: OperatorAdjustmentRef,
    description: 'Adds funds to an account; the ledger entry keeps the reason and the operator token (operator only).',
    args: adjustmentArgs(t),
    errors: { types: [ValidationError, NotFoundError] },
    resolve: (_root, args, context) => context.services.operator.credit(context.auth, adjustmentInput(args)),
  }),
  operatorDebit: t.field({
    ...operatorOnly,
    type: OperatorAdjustmentRef,
    description:
      'Removes funds from an account, never past its balance or into funds held for running calls (operator only).',
    args: adjustmentArgs(t),
    errors: { types: [ValidationError, NotFoundError, InsufficientBalanceError] },
    resolve: (_root, args, context) => context.services.operator.debit(context.auth, adjustmentInput(args)),
  }),
}));
