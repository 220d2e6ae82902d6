import {
  ANALYTICS_MODEL_TYPES,
  ANALYTICS_UNIT_TYPES,
  type DailySeries,
  type KeyUsage,
  type ModelUsage,
  type SpendTotals,
  type UsageAnalytics,
} from '../../src/billing/analytics.types.ts';
import type { BalanceSummary } from '../../src/billing/balance.service.ts';
import { formatNano } from '../../src/billing/money.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';

const dayStart = (day: string) => new Date(`${day}T00:00:00Z`);

const AnalyticsModelTypeEnum = builder.enumType('AnalyticsModelType', { values: ANALYTICS_MODEL_TYPES });

const UsageBreakdownRef = builder.objectRef<SpendTotals & { type: string }>('UsageBreakdown').implement({
  fields: (t) => ({
    type: t.exposeString('type', { description: 'Input, Output, Cache Read, Cache Write…' }),
    usd: t.field({ type: 'Decimal', resolve: (line) => formatNano(line.usd) }),
    diem: t.field({ type: 'Decimal', resolve: (line) => formatNano(line.diem) }),
    units: t.float({ resolve: (line) => Number(line.units) }),
  }),
});

const ModelUsageRef = builder.objectRef<ModelUsage>('ModelUsage').implement({
  fields: (t) => ({
    modelName: t.exposeString('modelName'),
    unitType: t.string({
      description: `The unit totalUnits counts: ${ANALYTICS_UNIT_TYPES.join(', ')}.`,
      resolve: (m) => m.unitType,
    }),
    modelType: t.field({ type: AnalyticsModelTypeEnum, resolve: (m) => m.modelType }),
    totalUsd: t.field({
      type: 'Decimal',
      description: 'Paid in USD and bundled credits.',
      resolve: (m) => formatNano(m.usd),
    }),
    totalDiem: t.field({
      type: 'Decimal',
      description: 'Paid in DIEM (and legacy VCU).',
      resolve: (m) => formatNano(m.diem),
    }),
    totalUnits: t.float({
      description: 'Units of the lines measured in unitType (a web search request is not a token).',
      resolve: (m) => Number(m.units),
    }),
    breakdown: t.field({
      type: [UsageBreakdownRef],
      nullable: true,
      description: 'Per line type; only when there are several.',
      resolve: (m) => (m.breakdown ? [...m.breakdown] : null),
    }),
  }),
});

const KeyUsageRef = builder.objectRef<KeyUsage>('KeyUsage').implement({
  fields: (t) => ({
    apiKeyId: t.id({ nullable: true, description: 'null: the web app.', resolve: (k) => k.apiKeyId }),
    description: t.exposeString('description'),
    totalUsd: t.field({ type: 'Decimal', resolve: (k) => formatNano(k.usd) }),
    totalDiem: t.field({ type: 'Decimal', resolve: (k) => formatNano(k.diem) }),
    totalUnits: t.float({
      description: 'Units of the lines measured in a listed unit type (requests and credits left out).',
      resolve: (k) => Number(k.units),
    }),
  }),
});

const SeriesValueRef = builder.objectRef<DailySeries['values'][number]>('UsageSeriesValue').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    diem: t.field({ type: 'Decimal', description: 'DIEM spent that day.', resolve: (v) => formatNano(v.diem) }),
    usd: t.field({
      type: 'Decimal',
      description: 'USD (and bundled credits) spent that day.',
      resolve: (v) => formatNano(v.usd),
    }),
  }),
});

const DailySeriesRef = builder.objectRef<DailySeries>('DailyUsageSeries').implement({
  fields: (t) => ({
    date: t.field({ type: 'DateTime', description: 'Start of the UTC day.', resolve: (d) => dayStart(d.date) }),
    values: t.field({
      type: [SeriesValueRef],
      description: 'One per top series name, in the order of the top list.',
      resolve: (d) => [...d.values],
    }),
  }),
});

const UsageByDateRef = builder.objectRef<UsageAnalytics['byDate'][number]>('UsageByDate').implement({
  fields: (t) => ({
    date: t.field({ type: 'DateTime', resolve: (d) => dayStart(d.date) }),
    usd: t.field({ type: 'Decimal', resolve: (d) => formatNano(d.usd) }),
    diem: t.field({ type: 'Decimal', resolve: (d) => formatNano(d.diem) }),
  }),
});

export const UsageAnalyticsRef = builder.objectRef<UsageAnalytics>('UsageAnalytics').implement({
  description: 'Aggregated usage from the daily rollups (beta); cached 10 minutes per account and range.',
  fields: (t) => ({
    lookback: t.exposeString('lookback', { description: '`Nd` or `startDate:endDate`.' }),
    startDate: t.string({ description: 'First UTC day (YYYY-MM-DD).', resolve: (a) => a.startDay }),
    endDate: t.string({ description: 'Last UTC day (YYYY-MM-DD), inclusive.', resolve: (a) => a.endDay }),
    byDate: t.field({ type: [UsageByDateRef], resolve: (a) => [...a.byDate] }),
    byModel: t.field({ type: [ModelUsageRef], description: 'Highest spend first.', resolve: (a) => [...a.byModel] }),
    byModelDaily: t.field({
      type: [DailySeriesRef],
      description: 'Spend per day (DIEM and USD apart) for the top 8 models.',
      resolve: (a) => [...a.byModelDaily],
    }),
    topModels: t.stringList({ resolve: (a) => [...a.topModels] }),
    byKey: t.field({ type: [KeyUsageRef], description: 'Highest spend first.', resolve: (a) => [...a.byKey] }),
    byKeyDaily: t.field({
      type: [DailySeriesRef],
      description: 'Spend per day (DIEM and USD apart) for the top 8 keys.',
      resolve: (a) => [...a.byKeyDaily],
    }),
    topKeyNames: t.stringList({ resolve: (a) => [...a.topKeyNames] }),
  }),
});

const BalanceAmountsRef = builder.simpleObject('BalanceAmounts', {
  fields: (t) => ({ diem: t.field({ type: 'Decimal' }), usd: t.field({ type: 'Decimal' }) }),
});

const BalanceSummaryRef = builder.objectRef<BalanceSummary>('BalanceSummary').implement({
  fields: (t) => ({
    canConsume: t.exposeBoolean('canConsume'),
    consumptionCurrency: t.field({
      type: CurrencyEnum,
      nullable: true,
      description: 'The balance the next call is charged to (DIEM → VCU → BUNDLED_CREDITS → USD).',
      resolve: (b) => b.consumptionCurrency,
    }),
    balances: t.field({
      type: BalanceAmountsRef,
      resolve: (b) => ({ diem: formatNano(b.balances.diem), usd: formatNano(b.balances.usd) }),
    }),
    diemEpochAllocation: t.field({
      type: 'Decimal',
      description: 'DIEM credited since 00:00 UTC today.',
      resolve: (b) => formatNano(b.diemEpochAllocation),
    }),
  }),
});

builder.queryFields((t) => ({
  usageAnalytics: t.field({
    type: UsageAnalyticsRef,
    description:
      'Usage analytics (ADMIN keys only): `lookback` (e.g. "7d", up to "90d"; the default), or `startDate` and `endDate` (YYYY-MM-DD) together.',
    authScopes: { admin: true },
    args: {
      lookback: t.arg.string({ required: false }),
      startDate: t.arg.string({ required: false }),
      endDate: t.arg.string({ required: false }),
    },
    resolve: (_root, args, context) =>
      context.services.analytics.analytics(context.auth, {
        lookback: args.lookback,
        startDate: args.startDate,
        endDate: args.endDate,
      }),
  }),
  balance: t.field({
    type: BalanceSummaryRef,
    description: 'Balances and which one pays next (ADMIN keys only).',
    authScopes: { admin: true },
    resolve: (_root, _args, context) => context.services.balance.summary(context.auth),
  }),
}));
