import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

/*
 * Usage analytics read the daily rollups only, never the usage entries: their cost grows with days × models and
 * days × keys, not with requests. Each query reads the coarsest rollup that has its columns: usage_daily_model (no
 * key) for the model rows, usage_daily_key (no model) for the key rows and the daily totals. Three scans run side by
 * side (two cores share them): totals per model and line type and per key, spend per day, and the daily series
 * (DIEM and USD apart) per day and model and per day and key. Grouping on plain columns keeps the hashing cheap; names are
 * derived afterwards.
 */

/** One account's rows, or (null: the operator's view) every account's. */
export type AccountScope = string | null;

const inRange = (accountId: AccountScope, startDay: string, endDay: string) =>
  accountId === null
    ? sql`day >= ${startDay}::date and day <= ${endDay}::date`
    : sql`account_id = ${accountId}::uuid and day >= ${startDay}::date and day <= ${endDay}::date`;

export interface ModelTotalRow {
  readonly modelId: string;
  readonly lineType: string;
  readonly modelType: string;
  readonly unitType: string;
  readonly currency: string;
  readonly amount: bigint;
  readonly units: string;
}

export interface KeyTotalRow {
  readonly apiKeyId: string;
  readonly lineType: string;
  readonly unitType: string;
  readonly currency: string;
  readonly amount: bigint;
  readonly units: string;
}

export interface DayTotalRow {
  readonly day: string;
  readonly currency: string;
  readonly amount: bigint;
}

/** Spend and units per model and line type, and per key and line type (units differ by line), each per currency. */
export async function totals(
  db: Database,
  accountId: AccountScope,
  startDay: string,
  endDay: string,
): Promise<{ models: ModelTotalRow[]; keys: KeyTotalRow[] }> {
  const result = await sql<{
    model_row: number;
    model_id: string;
    line_type: string;
    model_type: string;
    unit_type: string;
    api_key_id: string;
    currency: string;
    amount: bigint;
    units: string;
  }>`
    select 1 as model_row, model_id, line_type, model_type, unit_type, '' as api_key_id, currency, sum(amount)::int8 as amount, sum(units)::text as units
    from usage_daily_model where ${inRange(accountId, startDay, endDay)}
    group by model_id, line_type, model_type, unit_type, currency
    union all
    select 0, '', line_type, '', unit_type, api_key_id, currency, sum(amount)::int8, sum(units)::text
    from usage_daily_key where ${inRange(accountId, startDay, endDay)}
    group by api_key_id, line_type, unit_type, currency`.execute(db);
  const models: ModelTotalRow[] = [];
  const keys: KeyTotalRow[] = [];
  for (const row of result.rows) {
    if (row.model_row === 1)
      models.push({
        modelId: row.model_id,
        lineType: row.line_type,
        modelType: row.model_type,
        unitType: row.unit_type,
        currency: row.currency,
        amount: row.amount,
        units: row.units,
      });
    else
      keys.push({
        apiKeyId: row.api_key_id,
        lineType: row.line_type,
        unitType: row.unit_type,
        currency: row.currency,
        amount: row.amount,
        units: row.units,
      });
  }
  return { models, keys };
}

/** Spend per day and currency. */
export async function dayTotals(
  db: Database,
  accountId: AccountScope,
  startDay: string,
  endDay: string,
): Promise<DayTotalRow[]> {
  const result = await sql<DayTotalRow>`
    select day::text as day, currency, sum(amount)::int8 as amount
    from usage_daily_key where ${inRange(accountId, startDay, endDay)} group by day, currency`.execute(db);
  return result.rows;
}

export interface DailyRow {
  readonly day: string;
  /** The model (its id, or its type when it has no id), or the key id ('' = the web app). */
  readonly name: string;
  /** DIEM and legacy VCU. */
  readonly diem: bigint;
  /** USD and bundled credits. */
  readonly usd: bigint;
}

const DIEM_SUM = sql`coalesce(sum(amount) filter (where currency in ('DIEM', 'VCU')), 0)::int8`;
const USD_SUM = sql`coalesce(sum(amount) filter (where currency not in ('DIEM', 'VCU')), 0)::int8`;

/** Spend per day and model, and per day and key: DIEM (and legacy VCU) apart from USD (and bundled credits). */
export async function dailySpend(
  db: Database,
  accountId: AccountScope,
  startDay: string,
  endDay: string,
): Promise<{ models: DailyRow[]; keys: DailyRow[] }> {
  const result = await sql<{
    model_row: number;
    day: string;
    model: string;
    api_key_id: string;
    diem: bigint;
    usd: bigint;
  }>`
    select 1 as model_row, day::text as day, case when model_id <> '' then model_id else model_type end as model,
      '' as api_key_id, ${DIEM_SUM} as diem, ${USD_SUM} as usd
    from usage_daily_model where ${inRange(accountId, startDay, endDay)}
    group by day, 3
    union all
    select 0, day::text, '', api_key_id, ${DIEM_SUM}, ${USD_SUM}
    from usage_daily_key where ${inRange(accountId, startDay, endDay)}
    group by day, api_key_id`.execute(db);
  const models: DailyRow[] = [];
  const keys: DailyRow[] = [];
  for (const row of result.rows) {
    const amounts = { day: row.day, diem: row.diem, usd: row.usd };
    if (row.model_row === 1) models.push({ ...amounts, name: row.model });
    else keys.push({ ...amounts, name: row.api_key_id });
  }
  return { models, keys };
}

/** Descriptions of some of the account's keys, revoked ones included (their usage still shows). */
export async function keyLabels(
  db: Database,
  accountId: AccountScope,
  ids: readonly string[],
): Promise<{ id: string; description: string; last6: string }[]> {
  if (ids.length === 0) return [];
  let query = db
    .selectFrom('api_keys')
    .select(['id', 'description', 'last6'])
    .where('id', 'in', [...ids]);
  if (accountId !== null) query = query.where('account_id', '=', accountId);
  return query.execute();
}
