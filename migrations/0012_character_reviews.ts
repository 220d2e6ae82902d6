import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Reviews of characters (GET /characters/{slug}/reviews), added by the operator. A review may name the account
 * that wrote it (`isOwner` for that caller). The character's rating_count and rating_sum are kept in step with
 * its reviews in the same transaction as each insert.
 */
const UP = [
  `
    create table character_reviews (
      id uuid primary key default gen_random_uuid(),
      character_id uuid not null references characters (id) on delete cascade,
      account_id uuid references accounts (id) on delete set null,
      username text not null,
      user_avatar_url text,
      rating int2 not null check (rating between 1 and 5),
      message text,
      locale text,
      created_at timestamptz not null default now()
    )`,
  `create index character_reviews_by_character on character_reviews (character_id, created_at desc, id desc)`,
];

const DOWN = [`drop table if exists character_reviews`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
