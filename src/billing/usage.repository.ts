import { sql, type Expression, type SqlBool, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/types.generated.ts';
import type { Currency } from './money.ts';
import { microsToIso, type DayCount } from './usage-range.ts';
import type { SortOrder, UsageCursor, UsageEntry, UsageEntryDetails, UsageWindow } from './usage.types.ts';

type Db = Database | Transaction<DB>;

/*
 * Reads of the usage ledger for the export (Kysely only). Every query is scoped to one account and walks the
 * (account_id, created_at, id) INCLUDE (currency) index: counts are index-only, pages skip inside one day at
 * most, and streaming is keyset pagination on (created_at, id).
 */

const ts = (micros: bigint) => sql`${microsToIso(micros)}::timestamptz`;

function windowConditions(accountId: string, window: UsageWindow, alias = 'usage_entries'): Expression<SqlBool>[] {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  const conditions = [sql<SqlBool>`${column('account_id')} = ${accountId}::uuid`];
  if (window.currency) conditions.push(sql<SqlBool>`${column('currency')} = ${window.currency}`);
  if (window.apiKeyId !== undefined) conditions.push(sql<SqlBool>`${column('api_key_id')} = ${window.apiKeyId}::uuid`);
  if (window.modelId !== undefined) conditions.push(sql<SqlBool>`${column('model_id')} = ${window.modelId}`);
  if (window.modelType !== undefined) conditions.push(sql<SqlBool>`${column('model_type')} = ${window.modelType}`);
  if (window.from !== undefined) conditions.push(sql<SqlBool>`${column('created_at')} >= ${ts(window.from)}`);
  if (window.until !== undefined) conditions.push(sql<SqlBool>`${column('created_at')} < ${ts(window.until)}`);
  return conditions;
}

const and = (conditions: readonly Expression<SqlBool>[]) => sql.join(conditions, sql` and `);

/** Entries in a window (exact, from the entries themselves); `diem` counts those in DIEM. */
export async function countWindow(
  db: Db,
  accountId: string,
  window: UsageWindow,
): Promise<{ total: number; diem: number }> {
  const result = await sql<{ total: string; diem: string }>`
    select count(*)::text as total, count(*) filter (where currency = 'DIEM')::text as diem
    from usage_entries where ${and(windowConditions(accountId, window))}`.execute(db);
  const row = result.rows[0];
  return { total: Number(row?.total ?? 0), diem: Number(row?.diem ?? 0) };
}

/**
 * Entries per whole day from the daily rollups (written in the same transaction as the entries). A rollup row
 * is per key, model and model type ('' for none; the filters are never ''), so those filters count exactly there
 * too.
 */
export async function rollupDayCounts(
  db: Db,
  accountId: string,
  filter: Pick<UsageWindow, 'currency' | 'apiKeyId' | 'modelId' | 'modelType'>,
  days: { afterDay?: string; beforeDay?: string },
): Promise<DayCount[]> {
  let query = db
    .selectFrom('usage_daily')
    .select([
      'day',
      sql<string>`sum(entries)::text`.as('total'),
      sql<string>`coalesce(sum(entries) filter (where currency = 'DIEM'), 0)::text`.as('diem'),
    ])
    .where('account_id', '=', accountId);
  if (filter.currency) query = query.where('currency', '=', filter.currency);
  if (filter.apiKeyId !== undefined) query = query.where('api_key_id', '=', filter.apiKeyId);
  if (filter.modelId !== undefined) query = query.where('model_id', '=', filter.modelId);
  if (filter.modelType !== undefined) query = query.where('model_type', '=', filter.modelType);
  if (days.afterDay) query = query.where('day', '>', days.afterDay);
  if (days.beforeDay) query = query.where('day', '<', days.beforeDay);
  const rows = await query.groupBy('day').execute();
  return rows.map((row) => ({ day: row.day, total: Number(row.total), diem: Number(row.diem) }));
}

const direction = (order: SortOrder) => sql.raw(order === 'asc' ? 'asc' : 'desc');

/** `limit` entries of a window in (created_at, id) order after skipping `skip`; the skip is index-only. */
export async function pageOfWindow(
  db: Db,
  accountId: string,
  window: UsageWindow,
  order: SortOrder,
  skip: number,
  limit: number,
): Promise<UsageEntry[]> {
  const dir = direction(order);
  const result = await sql<UsageRow>`
    select ${entryColumns('e')} from (
      select id, created_at from usage_entries where ${and(windowConditions(accountId, window))}
      order by created_at ${dir}, id ${dir} offset ${skip} limit ${limit}
    ) as p join usage_entries as e on e.id = p.id
    order by p.created_at ${dir}, p.id ${dir}`.execute(db);
  return result.rows.map(rowToUsageEntry);
}

/** Up to `limit` entries of a window strictly after `cursor` in (created_at, id) order. */
export async function entriesAfter(
  db: Db,
  accountId: string,
  window: UsageWindow,
  order: SortOrder,
  cursor: UsageCursor | undefined,
  limit: number,
): Promise<UsageEntry[]> {
  const dir = direction(order);
  const conditions = windowConditions(accountId, window, 'e');
  if (cursor) {
    const position = sql`(${ts(cursor.micros)}, ${cursor.id}::uuid)`;
    conditions.push(
      order === 'asc'
        ? sql<SqlBool>`(e.created_at, e.id) > ${position}`
        : sql<SqlBool>`(e.created_at, e.id) < ${position}`,
    );
  }
  const result = await sql<UsageRow>`
    select ${entryColumns('e')} from usage_entries as e where ${and(conditions)}
    order by e.created_at ${dir}, e.id ${dir} limit ${limit}`.execute(db);
  return result.rows.map(rowToUsageEntry);
}

interface UsageRow {
  id: string;
  account_id: string;
  api_key_id: string | null;
  created_at: Date;
  created_us: bigint;
  sku: string;
  model_id: string | null;
  model_type: string | null;
  unit_type: string | null;
  line_type: string | null;
  price_per_unit_usd: string;
  units: string;
  amount: bigint;
  currency: string;
  notes: string;
  request_id: string | null;
  inference_details: unknown;
}

const entryColumns = (alias: string) =>
  sql.raw(
    [
      'id',
      'account_id',
      'api_key_id',
      'created_at',
      'sku',
      'model_id',
      'model_type',
      'unit_type',
      'line_type',
      'price_per_unit_usd',
      'units',
      'amount',
      'currency',
      'notes',
      'request_id',
      'inference_details',
    ]
      .map((column) => `${alias}.${column}`)
      .concat(`(extract(epoch from ${alias}.created_at) * 1000000)::int8 as created_us`)
      .join(', '),
  );

function rowToUsageEntry(row: UsageRow): UsageEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    createdAt: row.created_at,
    createdAtMicros: row.created_us,
    sku: row.sku,
    modelId: row.model_id,
    modelType: row.model_type,
    unitType: row.unit_type,
    lineType: row.line_type,
    pricePerUnitUsd: row.price_per_unit_usd,
    units: row.units,
    amount: row.amount,
    currency: row.currency as Currency,
    notes: row.notes,
    requestId: row.request_id,
    inferenceDetails: detailsOf(row.inference_details),
  };
}

/** The stored inferenceDetails object, keeping only its documented fields with the right types. */
export function detailsOf(value: unknown): UsageEntryDetails | null {
  const raw = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (typeof raw !== 'object' || raw === null) return null;
  const record = raw as Record<string, unknown>;
  const number = (key: string) => (typeof record[key] === 'number' ? record[key] : undefined);
  return {
    requestId: typeof record.requestId === 'string' ? record.requestId : '',
    inferenceExecutionTime: number('inferenceExecutionTime') ?? 0,
    ...(number('promptTokens') !== undefined && { promptTokens: number('promptTokens') }),
    ...(number('completionTokens') !== undefined && { completionTokens: number('completionTokens') }),
  };
}
