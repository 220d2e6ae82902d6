import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * x402 top-ups keyed and watched as the chain sees them (src/wallets/top-up.service.ts, top-up-sweep.ts):
 * - An EIP-3009 nonce is unique per authorizer, not per token: the key becomes (asset, payer, nonce), so another
 *   wallet's authorization with the same nonce no longer blocks a payer's own.
 * - The sweep re-checks every row that is not `settled`, `failed` ones included, until the chain has decided it for
 *   good: `closed_at` marks a row it stops looking at, `checked_at` when it last looked (rows are taken least
 *   recently checked first, so a long backlog still rotates). Rows already there start open, so a `failed` row whose
 *   transfer did reach the receiver is credited.
 * - `pay_to`: the receiver the authorization pays (its signed `to`), so the check does not depend on the receiver
 *   configured today; rows already there have none and are checked against the configured one.
 */
const UP = [
  `alter table x402_payments drop constraint x402_payments_asset_nonce_key`,
  `alter table x402_payments add constraint x402_payments_asset_payer_nonce_key unique (asset, payer, nonce)`,
  `alter table x402_payments add column checked_at timestamptz`,
  `alter table x402_payments add column closed_at timestamptz`,
  `alter table x402_payments add column pay_to text`,
  `drop index x402_payments_pending`,
  `
    create index x402_payments_open on x402_payments (checked_at nulls first, created_at)
    where status <> 'settled' and closed_at is null`,
];

const DOWN = [
  `drop index if exists x402_payments_open`,
  `create index x402_payments_pending on x402_payments (created_at) where status = 'pending'`,
  `alter table x402_payments drop column pay_to`,
  `alter table x402_payments drop column closed_at`,
  `alter table x402_payments drop column checked_at`,
  `alter table x402_payments drop constraint x402_payments_asset_payer_nonce_key`,
  `alter table x402_payments add constraint x402_payments_asset_nonce_key unique (asset, nonce)`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
