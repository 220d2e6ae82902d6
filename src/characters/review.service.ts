import { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireAccount, requireOperator } from '../auth/permissions.ts';
import type { Database } from '../db/database.ts';
import { clip, NotFoundError } from '../errors.ts';
import { parseInput, storedString } from '../validation.ts';
import { getCharacterBySlug } from './character.repository.ts';
import { insertReview, pageOfReviews, type ReviewRow } from './review.repository.ts';

export interface CharacterReview {
  readonly id: string;
  readonly characterId: string;
  readonly createdAt: Date;
  /** Whether the caller's account wrote it. */
  readonly isOwner: boolean;
  readonly locale: string | null;
  readonly message: string | null;
  readonly rating: number;
  readonly userAvatarUrl: string | null;
  readonly username: string;
}

export interface CharacterReviewPage {
  readonly reviews: readonly CharacterReview[];
  readonly pagination: { page: number; pageSize: number; total: number; totalPages: number };
  readonly summary: { averageRating: number; totalReviews: number };
}

const blankToUndefined = (value: unknown) => (value === '' || value === null ? undefined : value);
const pageNumber = (min: number, max: number, fallback: number) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(min, `must be at least ${min}`)
      .max(max, `must be at most ${max}`)
      .default(fallback),
  );

export const ReviewPageQuery = z.object({
  page: pageNumber(1, 1_000_000, 1).describe('Page number, from 1 (default 1)'),
  pageSize: pageNumber(1, 100, 20).describe('Reviews per page, 1 to 100 (default 20)'),
});

export const AddReviewInput = z.object({
  slug: storedString().min(1),
  username: storedString().trim().min(1).max(64),
  rating: z.coerce.number().int('must be an integer').min(1, 'must be 1 to 5').max(5, 'must be 1 to 5'),
  message: storedString().max(4000).optional(),
  locale: storedString().max(35).optional(),
  userAvatarUrl: z.url().max(2000).optional(),
  accountId: z.uuid('must be an account id').optional(),
});

const ReviewSlug = z.object({ slug: storedString().min(1).max(200) });

/** Character reviews: read by any account, added by the operator (CLI); ratings feed the character's stats. */
export class CharacterReviewService {
  constructor(private readonly deps: { db: Database }) {}

  async list(auth: AuthContext, slug: string, query: unknown = {}): Promise<CharacterReviewPage> {
    const { accountId } = requireAccount(auth);
    const { page, pageSize } = parseInput(ReviewPageQuery, query ?? {});
    const characterId = await this.characterId(slug);
    const { rows, total, ratingSum } = await pageOfReviews(this.deps.db, characterId, (page - 1) * pageSize, pageSize);
    return {
      reviews: rows.map((row) => toReview(row, accountId)),
      pagination: { page, pageSize, total, totalPages: Math.ceil(total / pageSize) },
      summary: { averageRating: total > 0 ? Math.round((ratingSum / total) * 100) / 100 : 0, totalReviews: total },
    };
  }

  async add(auth: AuthContext, input: unknown): Promise<CharacterReview> {
    requireOperator(auth);
    const review = parseInput(AddReviewInput, input);
    const row = await insertReview(this.deps.db, {
      characterId: await this.characterId(review.slug),
      accountId: review.accountId ?? null,
      username: review.username,
      userAvatarUrl: review.userAvatarUrl ?? null,
      rating: review.rating,
      message: review.message ?? null,
      locale: review.locale ?? null,
    });
    return toReview(row, null);
  }

  private async characterId(slug: string): Promise<string> {
    parseInput(ReviewSlug, { slug });
    const character = await getCharacterBySlug(this.deps.db, slug);
    if (!character) throw new NotFoundError(`Character ${clip(slug)} not found`, 'CHARACTER_NOT_FOUND');
    return character.id;
  }
}

function toReview(row: ReviewRow, callerAccountId: string | null): CharacterReview {
  return {
    id: row.id,
    characterId: row.character_id,
    createdAt: row.created_at,
    isOwner: callerAccountId !== null && row.account_id === callerAccountId,
    locale: row.locale,
    message: row.message,
    rating: row.rating,
    userAvatarUrl: row.user_avatar_url,
    username: row.username,
  };
}
