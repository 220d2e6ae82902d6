import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Stored responses of POST /responses (src/responses/): what `previous_response_id` continues from. `history` is the
 * conversation as chat messages up to and including this response's output (instructions excluded, as OpenAI does);
 * `response` is the response object as it was answered. Rows belong to an account: another account's id reads as
 * unknown.
 */
const UP = [
  `
    create table responses (
      id text primary key,
      account_id uuid not null references accounts (id) on delete cascade,
      model_id text not null,
      history jsonb not null,
      response jsonb not null,
      created_at timestamptz not null default now()
    )`,
  `create index responses_by_account on responses (account_id, created_at desc)`,
];

const DOWN = [`drop table if exists responses`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
