import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

export interface ReviewRow {
  id: string;
  character_id: string;
  account_id: string | null;
  username: string;
  user_avatar_url: string | null;
  rating: number;
  message: string | null;
  locale: string | null;
  created_at: Date;
}

export interface ReviewWrite {
  readonly characterId: string;
  readonly accountId: string | null;
  readonly username: string;
  readonly userAvatarUrl: string | null;
  readonly rating: number;
  readonly message: string | null;
  readonly locale: string | null;
}

/** One page of a character's reviews, newest first, with the count and rating sum of all of them. */
export async function pageOfReviews(
  db: Database,
  characterId: string,
  offset: number,
  limit: number,
): Promise<{ rows: ReviewRow[]; total: number; ratingSum: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('character_reviews')
      .selectAll()
      .where('character_id', '=', characterId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute(),
    db
      .selectFrom('character_reviews')
      .select([sql<string>`count(*)::text`.as('n'), sql<string>`coalesce(sum(rating), 0)::text`.as('sum')])
      .where('character_id', '=', characterId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as ReviewRow[], total: Number(count.n), ratingSum: Number(count.sum) };
}

/** Stores a review and adds its rating to the character's totals, in one transaction. */
export async function insertReview(db: Database, review: ReviewWrite): Promise<ReviewRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('character_reviews')
      .values({
        character_id: review.characterId,
        account_id: review.accountId,
        username: review.username,
        user_avatar_url: review.userAvatarUrl,
        rating: review.rating,
        message: review.message,
        locale: review.locale,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('characters')
      .set({
        rating_count: sql`rating_count + 1`,
        rating_sum: sql`rating_sum + ${review.rating}`,
        updated_at: sql`now()`,
      })
      .where('id', '=', review.characterId)
      .execute();
    return row as ReviewRow;
  });
}
