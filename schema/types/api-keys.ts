import type { ApiKey, ApiKeyUsage } from '../../src/auth/api-key.ts';
import { formatNano } from '../../src/billing/money.ts';
import { AdminKeyRequiredError, NotFoundError, ValidationError } from '../../src/errors.ts';
import { builder } from '../builder.ts';
import { ApiKeyTypeEnum, LimitPeriodEnum, ModelPrivacyEnum } from './enums.ts';

const decimalOrNull = (value: bigint | null) => (value === null ? null : formatNano(value));

const ConsumptionLimits = builder.simpleObject('ConsumptionLimits', {
  description: 'Spend limits per period; null means no limit.',
  fields: (t) => ({
    usd: t.field({ type: 'Decimal', nullable: true }),
    diem: t.field({ type: 'Decimal', nullable: true }),
    vcu: t.field({ type: 'Decimal', nullable: true, deprecationReason: 'VCU is the legacy form of DIEM' }),
  }),
});

const UsageAmounts = builder.simpleObject('UsageAmounts', {
  fields: (t) => ({
    usd: t.field({ type: 'Decimal' }),
    diem: t.field({ type: 'Decimal' }),
    vcu: t.field({ type: 'Decimal', nullable: true }),
  }),
});

const ApiKeyUsageRef = builder.objectRef<ApiKeyUsage>('ApiKeyUsage').implement({
  fields: (t) => ({
    trailingSevenDays: t.field({
      type: UsageAmounts,
      resolve: (usage) => ({
        usd: formatNano(usage.trailingSevenDays.usd),
        diem: formatNano(usage.trailingSevenDays.diem),
        vcu: formatNano(usage.trailingSevenDays.vcu),
      }),
    }),
    currentPeriod: t.field({
      type: UsageAmounts,
      resolve: (usage) => ({
        usd: formatNano(usage.currentPeriodUsage.usd),
        diem: formatNano(usage.currentPeriodUsage.diem),
        vcu: null,
      }),
    }),
  }),
});

export const ApiKeyRef = builder.loadableObject('ApiKey', {
  description: 'An API key of the caller’s account. The secret is shown once, at creation.',
  // findByIds answers in id order, so no sort is needed; an unknown id becomes that item's error.
  load: async (ids: string[], context) =>
    (await context.services.apiKeys.findByIds(context.auth, ids)).map(
      (key, i) => key ?? new NotFoundError(`API key ${ids[i]} not found`),
    ),
  toKey: (key) => key.id,
  cacheResolved: true,
  fields: (t) => ({
    id: t.exposeID('id'),
    apiKeyType: t.field({ type: ApiKeyTypeEnum, resolve: (key) => key.apiKeyType }),
    description: t.exposeString('description'),
    last6Chars: t.exposeString('last6Chars'),
    consumptionLimits: t.field({
      type: ConsumptionLimits,
      resolve: (key) => ({
        usd: decimalOrNull(key.consumptionLimits.usd),
        diem: decimalOrNull(key.consumptionLimits.diem),
        vcu: decimalOrNull(key.consumptionLimits.vcu),
      }),
    }),
    limitPeriod: t.field({ type: LimitPeriodEnum, resolve: (key) => key.limitPeriod }),
    modelPrivacy: t.field({ type: ModelPrivacyEnum, resolve: (key) => key.modelPrivacy }),
    createdAt: t.field({ type: 'DateTime', resolve: (key) => key.createdAt }),
    expiresAt: t.field({ type: 'DateTime', nullable: true, resolve: (key) => key.expiresAt }),
    lastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (key) => key.lastUsedAt }),
    usage: t.loadable({
      type: ApiKeyUsageRef,
      description:
        'Spend over the trailing seven days and in the current limit period (batched for all keys of a query).',
      load: async (keys: ApiKey[], context) => {
        const usage = await context.services.apiKeys.usageOf(context.auth, keys);
        return keys.map((key) => usage.get(key.id) ?? new Error(`No usage for key ${key.id}`));
      },
      resolve: (key) => key,
    }),
  }),
});

const ConsumptionLimitInput = builder.inputType('ConsumptionLimitInput', {
  description: 'Each value ≥ 0, or null for no limit; omitted leaves it unchanged.',
  fields: (t) => ({
    usd: t.field({ type: 'Decimal', required: false }),
    diem: t.field({ type: 'Decimal', required: false }),
    vcu: t.field({ type: 'Decimal', required: false }),
  }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    apiKeyType: t.field({ type: ApiKeyTypeEnum, required: true }),
    description: t.string({ required: true, description: 'At most 64 characters.' }),
    expiresAt: t.string({ required: false, description: '"" or null for never, YYYY-MM-DD, or an ISO date-time.' }),
    consumptionLimit: t.field({ type: ConsumptionLimitInput, required: false }),
    limitPeriod: t.field({ type: LimitPeriodEnum, required: false }),
    modelPrivacy: t.field({ type: ModelPrivacyEnum, required: false }),
  }),
});

const UpdateApiKeyInput = builder.inputType('UpdateApiKeyInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    description: t.string({ required: false }),
    expiresAt: t.string({ required: false }),
    consumptionLimit: t.field({ type: ConsumptionLimitInput, required: false }),
    limitPeriod: t.field({ type: LimitPeriodEnum, required: false }),
    modelPrivacy: t.field({ type: ModelPrivacyEnum, required: false }),
  }),
});

/** GraphQL passes explicit nulls; only `expiresAt` and limit values give null a meaning. */
function withoutNulls<T extends Record<string, unknown>>(
  input: T,
  keep: readonly string[] = ['expiresAt'],
): Partial<T> {
  return Object.fromEntries(
    Object.entries(input).filter(([key, value]) => value !== null || keep.includes(key)),
  ) as Partial<T>;
}

const CreatedApiKey = builder.simpleObject('CreatedApiKey', {
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyRef }),
    secret: t.string({ description: 'The key itself. Shown only here; store it now.' }),
  }),
});

const DeletedApiKey = builder.simpleObject('DeletedApiKey', { fields: (t) => ({ id: t.id(), success: t.boolean() }) });

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: [ApiKeyRef],
    description: 'Active API keys of the caller’s account (ADMIN keys only).',
    authScopes: { admin: true },
    resolve: (_root, _args, context) => context.services.apiKeys.list(context.auth),
  }),
  apiKey: t.field({
    type: ApiKeyRef,
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [NotFoundError, ValidationError] },
    resolve: (_root, args, context) => context.services.apiKeys.get(context.auth, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKey,
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    errors: { types: [ValidationError, AdminKeyRequiredError] },
    resolve: async (_root, { input }, context) => {
      const created = await context.services.apiKeys.create(context.auth, {
        ...withoutNulls(input),
        ...(input.consumptionLimit ? { consumptionLimit: input.consumptionLimit } : {}),
      });
      return { apiKey: created.key, secret: created.secret };
    },
  }),
  updateApiKey: t.field({
    type: ApiKeyRef,
    authScopes: { admin: true },
    args: { input: t.arg({ type: UpdateApiKeyInput, required: true }) },
    errors: { types: [ValidationError, NotFoundError] },
    resolve: (_root, { input }, context) =>
      context.services.apiKeys.update(context.auth, {
        ...withoutNulls(input),
        id: String(input.id),
        ...(input.consumptionLimit ? { consumptionLimit: input.consumptionLimit } : {}),
      }),
  }),
  deleteApiKey: t.field({
    type: DeletedApiKey,
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [ValidationError] },
    resolve: async (_root, { id }, context) => {
      await context.services.apiKeys.revoke(context.auth, String(id));
      return { id: String(id), success: true };
    },
  }),
}));
