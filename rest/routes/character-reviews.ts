import { z } from 'zod';
import { ReviewPageQuery, type CharacterReview } from '../../src/characters/review.service.ts';
import { iso, json, queryObject, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';

const ReviewWire = z.object({
  id: z.uuid(),
  characterId: z.uuid(),
  createdAt: z.iso.datetime(),
  isOwner: z.boolean(),
  locale: z.string().nullable(),
  message: z.string().nullable(),
  rating: z.number().int().min(1).max(5),
  userAvatarUrl: z.string().nullable(),
  username: z.string(),
});

function reviewWire(review: CharacterReview): { [field: string]: JsonValue } {
  return {
    id: review.id,
    characterId: review.characterId,
    createdAt: iso(review.createdAt),
    isOwner: review.isOwner,
    locale: review.locale,
    message: review.message,
    rating: review.rating,
    userAvatarUrl: review.userAvatarUrl,
    username: review.username,
  };
}

export const characterReviewRoutes: Route[] = [
  {
    method: 'GET',
    path: '/characters/:slug/reviews',
    access: 'account',
    doc: {
      summary: 'A character’s reviews, newest first (page, pageSize 1–100), with the average rating',
      tags: ['Characters'],
      query: ReviewPageQuery,
      response: z.object({
        object: z.literal('list'),
        data: z.array(ReviewWire),
        pagination: z.object({
          page: z.number().int(),
          pageSize: z.number().int(),
          total: z.number().int(),
          totalPages: z.number().int(),
        }),
        summary: z.object({ averageRating: z.number(), totalReviews: z.number().int() }),
      }),
    },
    async handler({ services, auth, params, url }) {
      const page = await services.characterReviews.list(auth, params.slug ?? '', queryObject(url));
      const { pagination } = page;
      return json(
        {
          object: 'list',
          data: page.reviews.map(reviewWire),
          pagination: { ...pagination },
          summary: { ...page.summary },
        },
        200,
        {
          'x-pagination-limit': String(pagination.pageSize),
          'x-pagination-page': String(pagination.page),
          'x-pagination-total': String(pagination.total),
          'x-pagination-total-pages': String(pagination.totalPages),
        },
      );
    },
  },
];
