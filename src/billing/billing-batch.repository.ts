import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/types.generated.ts';
import type { BatchPlan, LeaseUpdateOp, LockedBalance, LockedKeySpend } from './billing-batch.ts';
import type { Nano } from './money.ts';
import { usageEntryColumns } from './billing.repository.ts';
import type { SettledUsageEntry } from './usage.types.ts';

/*
 * Statements for a batch of reserve and settle calls (see billing-batch.ts), each one round trip whatever the
 * batch size. A batch costs two statements: one before its decisions, one after. Each chains several locks,
 * inserts and updates through data-modifying CTEs, which reads more plainly as SQL than through Kysely's builder,
 * so they are raw SQL. Their rows travel as JSON parameters (int8 and numeric as strings, so exactly), typed by
 * jsonb_to_recordset, which also keeps the statement text the same for every batch: on PostgreSQL they run as named
 * prepared statements (the `prepared:` tag, see src/db/database.ts), parsed and planned once per connection.
 */

type Tx = Transaction<DB>;

/** A row as a JSON parameter carries it: bigint already turned into its decimal string (Date becomes ISO text). */
type JsonRow = Readonly<Record<string, string | number | boolean | null | object>>;

/**
 * JSON for a statement parameter. The rows' bigints are written as strings by the mappings below rather than by a
 * replacer function: JSON.stringify with a replacer costs several times more, on the hot write path.
 */
const rowsParam = (rows: readonly JsonRow[]): string => JSON.stringify(rows);

/** What a batch holds locked before it decides. */
export interface BatchLocks {
  /** The reservations this batch moved from held to settled (the others were not held any more). */
  readonly claimed: Set<string>;
  /** The leases of the batch's lease updates that are still held, with what they hold after their calls' charges. */
  readonly leases: Map<string, Nano>;
  readonly balances: LockedBalance[];
  readonly spends: LockedKeySpend[];
  /** The batch's transaction id: asked after a COMMIT whose answer was lost (src/db/commit-status.ts). */
  readonly xid: string;
}

/**
 * Everything a batch does before deciding, in one statement: moves the settle calls' reservations from held to
 * settled; takes the charges of lease updates from their leases (if still held) and moves their expiry (only when it
 * moves by more than 10 s: the heartbeat writes every ttl/3, so the row still expires 30 s or more ahead, and an
 * unchanged expiry, which an index holds, lets PostgreSQL update the row in place instead of adding index entries
 * and a dead row on every batch); for the
 * reservations and leases it moved, inserts their usage entries and adds them to the daily rollups (usage_daily and its coarser
 * usage_daily_model and usage_daily_key; summed by
 * PostgreSQL, one row per rollup key, because ON CONFLICT DO UPDATE may touch a row only once per statement); and
 * locks the accounts' balance rows and the touched key spend rows, returned as JSON with int8 as text. The locks are
 * taken in the order every other writer takes them (reservation, balance, key spend, rollup), rows of one table in
 * key order, so that batches running side by side (other processes) cannot deadlock.
 */
export async function claimAndLock(
  trx: Tx,
  accountIds: readonly string[],
  entries: readonly SettledUsageEntry[],
  keySpendRows: readonly { apiKeyId: string; periodStart: Date }[],
  leaseUpdates: readonly LeaseUpdateOp[] = [],
): Promise<BatchLocks> {
  const { rows, leases, keys } = claimParams(entries, keySpendRows, leaseUpdates);
  const result = await sql<ClaimRow>`/* prepared:batch_claim_and_lock */
    with candidate as (
      select * from jsonb_to_recordset(${rowsParam(rows)}::jsonb) as e(
        id uuid, account_id uuid, api_key_id uuid, reservation_id uuid, created_at timestamptz, sku text, model_id text,
        model_type text, unit_type text, line_type text, price_per_unit_usd numeric, units numeric, amount int8,
        currency text, notes text, request_id text, inference_details jsonb)
    ), claimed as (
      update reservations set status = 'settled', finished_at = now()
      where id in (select reservation_id from candidate) and status = 'held' and lease_holder is null
      returning id
    ), touched_lease as (
      update reservations r set amount = r.amount - l.consumed,
        expires_at = case when l.expires_at > r.expires_at + interval '10 seconds' then l.expires_at else r.expires_at end,
        status = case when l.finish then 'settled' else r.status end, finished_at = case when l.finish then now() end
      from jsonb_to_recordset(${rowsParam(leases)}::jsonb) as l(id uuid, consumed int8, expires_at timestamptz, finish boolean)
      where r.id = l.id and r.status = 'held'
      returning r.id, r.amount
    ), locked_balance as (
      select account_id, currency, amount, reserved from balances
      where account_id in (select value::uuid from jsonb_array_elements_text(${JSON.stringify(accountIds)}::jsonb))
      order by account_id, currency
      for update
    ), locked_spend as (
      select s.api_key_id, s.period_start, s.spent_usd, s.reserved_usd, s.spent_diem, s.reserved_diem, k.limit_usd, k.limit_diem
      from api_key_spend s join api_keys k on k.id = s.api_key_id
      where (s.api_key_id, s.period_start) in (
        select api_key_id, period_start from jsonb_to_recordset(${rowsParam(keys)}::jsonb) as w(api_key_id uuid, period_start timestamptz))
      order by s.api_key_id, s.period_start
      for update of s
    ), inserted as (
      insert into usage_entries (id, account_id, api_key_id, reservation_id, created_at, sku, model_id, model_type, unit_type,
        line_type, price_per_unit_usd, units, amount, currency, notes, request_id, inference_details)
      select * from candidate where reservation_id in (select id from claimed union all select id from touched_lease)
      returning account_id, created_at, api_key_id, model_id, model_type, unit_type, line_type, currency, amount, units
    ), rolled_up as (
      insert into usage_daily (account_id, day, api_key_id, model_id, model_type, unit_type, line_type, currency, amount, units, entries)
      select account_id, (created_at at time zone 'UTC')::date, coalesce(api_key_id::text, ''), coalesce(model_id, ''),
        coalesce(model_type, ''), coalesce(unit_type, ''), coalesce(line_type, ''), currency, -sum(amount), sum(units), count(*)
      from inserted group by 1, 2, 3, 4, 5, 6, 7, 8 order by 1, 2, 3, 4, 5, 6, 7, 8
      on conflict (account_id, day, api_key_id, model_id, line_type, currency, model_type, unit_type) do update set
        amount = usage_daily.amount + excluded.amount, units = usage_daily.units + excluded.units, entries = usage_daily.entries + excluded.entries
    ), rolled_up_model as (
      insert into usage_daily_model (account_id, day, model_id, model_type, unit_type, line_type, currency, amount, units, entries)
      select account_id, (created_at at time zone 'UTC')::date, coalesce(model_id, ''), coalesce(model_type, ''),
        coalesce(unit_type, ''), coalesce(line_type, ''), currency, -sum(amount), sum(units), count(*)
      from inserted group by 1, 2, 3, 4, 5, 6, 7 order by 1, 2, 3, 4, 5, 6, 7
      on conflict (account_id, day, model_id, line_type, currency, model_type, unit_type) do update set
        amount = usage_daily_model.amount + excluded.amount, units = usage_daily_model.units + excluded.units,
        entries = usage_daily_model.entries + excluded.entries
    ), rolled_up_key as (
      insert into usage_daily_key (account_id, day, api_key_id, unit_type, line_type, currency, amount, units, entries)
      select account_id, (created_at at time zone 'UTC')::date, coalesce(api_key_id::text, ''), coalesce(unit_type, ''),
        coalesce(line_type, ''), currency, -sum(amount), sum(units), count(*)
      from inserted group by 1, 2, 3, 4, 5, 6 order by 1, 2, 3, 4, 5, 6
      on conflict (account_id, day, api_key_id, line_type, currency, unit_type) do update set
        amount = usage_daily_key.amount + excluded.amount, units = usage_daily_key.units + excluded.units,
        entries = usage_daily_key.entries + excluded.entries
    )
    select
      array(select id::text from claimed) as claimed,
      (select coalesce(json_agg(json_build_object('id', id, 'amount', amount::text)), '[]') from touched_lease) as leases,
      (select coalesce(json_agg(json_build_object('account_id', account_id, 'currency', currency, 'amount', amount::text, 'reserved', reserved::text)), '[]')
        from locked_balance) as balances,
      (select coalesce(json_agg(json_build_object(
          'api_key_id', api_key_id, 'period_start', period_start, 'spent_usd', spent_usd::text, 'reserved_usd', reserved_usd::text,
          'spent_diem', spent_diem::text, 'reserved_diem', reserved_diem::text, 'limit_usd', limit_usd::text, 'limit_diem', limit_diem::text)), '[]')
        from locked_spend) as spends,
      pg_current_xact_id()::text as xid`.execute(trx);
  const row = result.rows[0];
  if (!row) throw new Error('The batch lock statement returned no row');
  return locksOf(row);
}

/** What the claim statement answers, int8 as text. */
interface ClaimRow {
  claimed: string[];
  leases: { id: string; amount: string }[];
  balances: JsonBalance[];
  spends: JsonKeySpend[];
  xid: string;
}

/** The claim statement's JSON parameters: the usage entries to insert, the lease updates, the key spend rows. */
function claimParams(
  entries: readonly SettledUsageEntry[],
  keySpendRows: readonly { apiKeyId: string; periodStart: Date }[],
  leaseUpdates: readonly LeaseUpdateOp[],
) {
  const leaseEntries = leaseUpdates.flatMap((op) => op.calls.flatMap((call) => call.entries));
  const rows = [...entries, ...leaseEntries].map((e) => ({
    id: e.id,
    ...usageEntryColumns(e),
    amount: String(e.amount),
    inference_details: e.inferenceDetails,
  }));
  const leases = leaseUpdates.map((op) => ({
    id: op.lease.id,
    consumed: String(op.calls.reduce((sum, call) => sum + call.charged, 0n)),
    expires_at: op.expiresAt,
    finish: op.finish,
  }));
  const keys = keySpendRows.map((row) => ({ api_key_id: row.apiKeyId, period_start: row.periodStart }));
  return { rows, leases, keys };
}

function locksOf(row: ClaimRow): BatchLocks {
  return {
    claimed: new Set(row.claimed),
    leases: new Map(row.leases.map((lease) => [lease.id, BigInt(lease.amount)])),
    balances: row.balances.map((b) => ({
      account_id: b.account_id,
      currency: b.currency,
      amount: BigInt(b.amount),
      reserved: BigInt(b.reserved),
    })),
    spends: row.spends.map(fromJsonKeySpend),
    xid: row.xid,
  };
}

interface JsonBalance {
  readonly account_id: string;
  readonly currency: string;
  readonly amount: string;
  readonly reserved: string;
}

interface JsonKeySpend {
  readonly api_key_id: string;
  readonly period_start: string;
  readonly spent_usd: string;
  readonly reserved_usd: string;
  readonly spent_diem: string;
  readonly reserved_diem: string;
  readonly limit_usd: string | null;
  readonly limit_diem: string | null;
}

const fromJsonKeySpend = (row: JsonKeySpend): LockedKeySpend => ({
  api_key_id: row.api_key_id,
  period_start: new Date(row.period_start),
  spent_usd: BigInt(row.spent_usd),
  reserved_usd: BigInt(row.reserved_usd),
  spent_diem: BigInt(row.spent_diem),
  reserved_diem: BigInt(row.reserved_diem),
  limit_usd: row.limit_usd === null ? null : BigInt(row.limit_usd),
  limit_diem: row.limit_diem === null ? null : BigInt(row.limit_diem),
});

/** Locks the key spend rows (sorted by the caller) and reads the keys' current limits with them. */
export async function lockKeySpend(
  trx: Tx,
  rows: readonly { apiKeyId: string; periodStart: Date }[],
): Promise<LockedKeySpend[]> {
  if (rows.length === 0) return [];
  return trx
    .selectFrom('api_key_spend')
    .innerJoin('api_keys', 'api_keys.id', 'api_key_spend.api_key_id')
    .select([
      'api_key_spend.api_key_id',
      'api_key_spend.period_start',
      'spent_usd',
      'reserved_usd',
      'spent_diem',
      'reserved_diem',
      'api_keys.limit_usd',
      'api_keys.limit_diem',
    ])
    .where((eb) =>
      eb.or(
        rows.map((row) =>
          eb.and([
            eb('api_key_spend.api_key_id', '=', row.apiKeyId),
            eb('api_key_spend.period_start', '=', row.periodStart),
          ]),
        ),
      ),
    )
    .orderBy('api_key_spend.api_key_id')
    .orderBy('api_key_spend.period_start')
    .forUpdate('api_key_spend')
    .execute();
}

/** Creates missing key spend rows (a key's first reservation of a period). */
export async function ensureKeySpendRows(
  trx: Tx,
  rows: readonly { apiKeyId: string; periodStart: Date }[],
): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('api_key_spend')
    .values(rows.map((row) => ({ api_key_id: row.apiKeyId, period_start: row.periodStart })))
    .onConflict((oc) => oc.columns(['api_key_id', 'period_start']).doNothing())
    .execute();
}

/**
 * Writes what a batch decided, in one statement: the new reservations and the leases grown or shrunk, the CHARGE
 * ledger entries, and the key spend and balance rows (locked by this transaction) moved by their deltas.
 */
export async function writeBatch(trx: Tx, plan: BatchPlan): Promise<void> {
  if (
    plan.reservations.length +
      plan.leaseChanges.length +
      plan.ledger.length +
      plan.balanceChanges.length +
      plan.keySpendChanges.length ===
    0
  )
    return;
  const reservations = plan.reservations.map((r) => ({
    id: r.id,
    account_id: r.accountId,
    api_key_id: r.apiKeyId,
    currency: r.currency,
    amount: String(r.amount),
    key_period_start: r.keyPeriodStart,
    limit_group: r.limitGroup,
    request_id: r.requestId,
    expires_at: r.expiresAt,
    lease_holder: r.leaseHolder,
  }));
  const leaseChanges = plan.leaseChanges.map((c) => ({ id: c.id, delta: String(c.delta) }));
  // `ord` keeps the plan's order (the order of settlement) into the ledger's sequence numbers.
  const ledger = plan.ledger.map((l, ord) => ({
    ord,
    account_id: l.accountId,
    currency: l.currency,
    amount: String(l.amount),
    balance_after: String(l.balanceAfter),
    request_id: l.requestId,
    model_id: l.modelId,
    created_at: l.createdAt,
  }));
  const balances = plan.balanceChanges.map((c) => ({
    account_id: c.accountId,
    currency: c.currency,
    amount: String(c.amount),
    reserved: String(c.reserved),
  }));
  const keySpend = plan.keySpendChanges.map((c) => ({
    api_key_id: c.apiKeyId,
    period_start: c.periodStart,
    spent_usd: String(c.spentUsd),
    reserved_usd: String(c.reservedUsd),
    spent_diem: String(c.spentDiem),
    reserved_diem: String(c.reservedDiem),
  }));
  await sql`/* prepared:batch_write */
    with new_reservation as (
      insert into reservations (id, account_id, api_key_id, currency, amount, key_period_start, limit_group, request_id, expires_at, lease_holder)
      select * from jsonb_to_recordset(${rowsParam(reservations)}::jsonb) as r(
        id uuid, account_id uuid, api_key_id uuid, currency text, amount int8, key_period_start timestamptz, limit_group text,
        request_id text, expires_at timestamptz, lease_holder text)
    ), lease_amount as (
      update reservations r set amount = r.amount + c.delta
      from jsonb_to_recordset(${rowsParam(leaseChanges)}::jsonb) as c(id uuid, delta int8)
      where r.id = c.id
    ), charge as (
      insert into account_ledger (account_id, currency, amount, balance_after, type, request_id, model_id, created_at)
      select account_id, currency, amount, balance_after, 'CHARGE', request_id, model_id, created_at
      from jsonb_to_recordset(${rowsParam(ledger)}::jsonb) as l(
        ord int4, account_id uuid, currency text, amount int8, balance_after int8, request_id text, model_id text,
        created_at timestamptz)
      order by l.ord
    ), key_spend as (
      update api_key_spend s set spent_usd = s.spent_usd + c.spent_usd, reserved_usd = s.reserved_usd + c.reserved_usd,
        spent_diem = s.spent_diem + c.spent_diem, reserved_diem = s.reserved_diem + c.reserved_diem
      from jsonb_to_recordset(${rowsParam(keySpend)}::jsonb) as c(
        api_key_id uuid, period_start timestamptz, spent_usd int8, reserved_usd int8, spent_diem int8, reserved_diem int8)
      where s.api_key_id = c.api_key_id and s.period_start = c.period_start
    )
    update balances b set amount = b.amount + c.amount, reserved = b.reserved + c.reserved, updated_at = now()
    from jsonb_to_recordset(${rowsParam(balances)}::jsonb) as c(account_id uuid, currency text, amount int8, reserved int8)
    where b.account_id = c.account_id and b.currency = c.currency`.execute(trx);
}
