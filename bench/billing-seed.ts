import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';

/**
 * Bulk seed for the billing read benchmark: one account, `entries` usage entries spread evenly over `days` days
 * up to now, `models` models and the account's keys, plus the daily rollups exactly as settlement would have
 * written them (grouped from the inserted entries). All in SQL (generate_series), so 1M rows take well under
 * a minute on PostgreSQL.
 *
 * Shape (deterministic per seed): 5% of entries from the web app (no key); key k is used with a skew towards
 * the first keys; each key works with its own window of 8 of the models (like real integrations), so the
 * rollups hold about keys × 8 × line types × currencies rows a day. Models 0–27 are LLMs (tokens, Input and
 * Output lines, token counts in inferenceDetails), 28–32 IMAGE, 33–35 TTS, 36–37 VIDEO, 38–39 ASR. Keys 0–4
 * pay in DIEM, keys 5–7 in DIEM or USD, the rest and the web app in USD.
 */
export interface SeedOptions {
  readonly accountId: string;
  readonly keyIds: readonly string[];
  readonly entries: number;
  readonly days: number;
  readonly models: number;
  readonly now?: Date;
}

export async function seedUsage(db: Database, options: SeedOptions): Promise<{ entries: number; rollupRows: number }> {
  const end = options.now ?? new Date();
  const keys = sql`array[${sql.join(options.keyIds.map((id) => sql`${id}::uuid`))}]`;
  const keyCount = options.keyIds.length;
  const spanMs = options.days * 86_400_000 - 1;
  await sql`select setseed(0.42)`.execute(db);
  await sql`
    insert into usage_entries (account_id, api_key_id, created_at, sku, model_id, model_type, unit_type, line_type,
      price_per_unit_usd, units, amount, currency, notes, request_id, inference_details)
    select ${options.accountId}::uuid,
      case when r.web then null else (${keys})[r.k + 1] end,
      ${end}::timestamptz - make_interval(secs => ${spanMs / 1000}::float8 * (1 - g.i::float8 / ${options.entries})),
      'bench-model-' || r.m || case when r.m < 28 then (case when g.i % 2 = 0 then '-input' else '-output' end) else '' end,
      'bench-model-' || r.m,
      t.model_type, t.unit_type,
      case when r.m < 28 then (case when g.i % 2 = 0 then 'Input' else 'Output' end) end,
      t.price, r.units, -r.nano, r.currency,
      'bench entry ' || g.i,
      md5(g.i::text),
      case when r.m < 28
        then jsonb_build_object('requestId', md5(g.i::text), 'inferenceExecutionTime', r.ms, 'promptTokens', r.units, 'completionTokens', r.units / 4)
        else jsonb_build_object('requestId', md5(g.i::text), 'inferenceExecutionTime', r.ms) end
    from generate_series(0, ${options.entries - 1}) as g(i)
    cross join lateral (
      select x.k, x.web, (x.k * 2 + floor(8 * power(random(), 1.5))::int) % ${options.models} as m,
        (1 + floor(random() * 4000))::int as units,
        (1000 + floor(random() * 20000000))::int8 as nano,
        (50 + floor(random() * 3000))::int as ms,
        case when x.web then 'USD' when x.k < 5 then 'DIEM' when x.k < 8 and random() < 0.5 then 'DIEM' else 'USD' end as currency
      from (select floor(${keyCount} * power(random(), 2))::int as k, random() < 0.05 as web, g.i as dependency) as x
    ) as r
    cross join lateral (
      select case when r.m < 28 then 'LLM' when r.m < 33 then 'IMAGE' when r.m < 36 then 'TTS' when r.m < 38 then 'VIDEO' else 'ASR' end as model_type,
             case when r.m < 28 then 'tokens' when r.m < 33 then 'images' when r.m < 36 then 'chars' when r.m < 38 then 'seconds' else 'minutes' end as unit_type,
             case when r.m < 28 then 0.000002::numeric else 0.01::numeric end as price
    ) as t`.execute(db);
  const rollups = await sql<{ rows: string }>`
    with inserted as (
      insert into usage_daily (account_id, day, api_key_id, model_id, model_type, unit_type, line_type, currency, amount, units, entries)
      select account_id, (created_at at time zone 'UTC')::date, coalesce(api_key_id::text, ''), coalesce(model_id, ''),
        coalesce(model_type, ''), coalesce(unit_type, ''), coalesce(line_type, ''), currency, sum(-amount)::int8, sum(units), count(*)
      from usage_entries where account_id = ${options.accountId}::uuid
      group by 1, 2, 3, 4, 5, 6, 7, 8
      returning 1
    ) select count(*)::text as rows from inserted`.execute(db);
  // The coarser rollups, as the migration that added them fills them.
  await sql`
    insert into usage_daily_model (account_id, day, model_id, model_type, unit_type, line_type, currency, amount, units, entries)
    select account_id, day, model_id, model_type, unit_type, line_type, currency, sum(amount), sum(units), sum(entries)
    from usage_daily where account_id = ${options.accountId}::uuid
    group by account_id, day, model_id, model_type, unit_type, line_type, currency`.execute(db);
  await sql`
    insert into usage_daily_key (account_id, day, api_key_id, unit_type, line_type, currency, amount, units, entries)
    select account_id, day, api_key_id, unit_type, line_type, currency, sum(amount), sum(units), sum(entries)
    from usage_daily where account_id = ${options.accountId}::uuid
    group by account_id, day, api_key_id, unit_type, line_type, currency`.execute(db);
  await sql`analyze usage_entries`.execute(db);
  await sql`analyze usage_daily`.execute(db);
  await sql`analyze usage_daily_model`.execute(db);
  await sql`analyze usage_daily_key`.execute(db);
  return { entries: options.entries, rollupRows: Number(rollups.rows[0]?.rows ?? 0) };
}
