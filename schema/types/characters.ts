import type { Character } from '../../src/characters/character.service.ts';
import type { CharacterReview, CharacterReviewPage } from '../../src/characters/review.service.ts';
import { NotFoundError } from '../../src/errors.ts';
import { builder } from '../builder.ts';
import { ModelRef } from './catalog.ts';

const CharacterStats = builder.simpleObject('CharacterStats', {
  fields: (t) => ({
    averageRating: t.float(),
    imports: t.int(),
    ratingCount: t.int(),
    ratingSum: t.int(),
    userRating: t.int({ nullable: true }),
  }),
});

export const CharacterRef = builder.loadableObject('Character', {
  description: 'A chat persona: a system prompt bound to a model.',
  load: async (ids: string[], context) =>
    (await context.services.characters.findByIds(context.auth, ids)).map(
      (character, i) => character ?? new NotFoundError(`Character ${ids[i]} not found`, 'CHARACTER_NOT_FOUND'),
    ),
  toKey: (character) => character.id,
  cacheResolved: true,
  fields: (t) => ({
    id: t.exposeID('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    author: t.exposeString('author'),
    adult: t.exposeBoolean('adult'),
    featured: t.exposeBoolean('featured'),
    tags: t.exposeStringList('tags'),
    webEnabled: t.exposeBoolean('webEnabled'),
    modelId: t.exposeString('modelId'),
    model: t.field({ type: ModelRef, nullable: true, resolve: (character) => character.modelId }),
    photoUrl: t.string({ nullable: true, resolve: (character) => character.photoUrl }),
    shareUrl: t.string({ nullable: true, resolve: (character) => character.shareUrl }),
    stats: t.field({ type: CharacterStats, resolve: (character: Character) => character.stats }),
    createdAt: t.field({ type: 'DateTime', resolve: (character) => character.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (character) => character.updatedAt }),
  }),
});

const CharacterSortBy = builder.enumType('CharacterSortBy', {
  values: {
    FEATURED: { value: 'featured' },
    MOST_RECENT: { value: 'mostRecent' },
    IMPORTS: { value: 'imports' },
    HIGHEST_RATING: { value: 'highestRating' },
  },
});
const SortOrder = builder.enumType('SortOrder', { values: { ASC: { value: 'asc' }, DESC: { value: 'desc' } } });

const CharacterFilter = builder.inputType('CharacterFilter', {
  fields: (t) => ({
    search: t.string({ required: false }),
    tags: t.stringList({ required: false, description: 'Characters with any of these tags.' }),
    modelId: t.string({ required: false }),
    isAdult: t.boolean({ required: false }),
    limit: t.int({ required: false, description: '1 to 100 (default 50).' }),
    offset: t.int({ required: false }),
    sortBy: t.field({ type: CharacterSortBy, required: false }),
    sortOrder: t.field({ type: SortOrder, required: false }),
  }),
});

builder.queryFields((t) => ({
  characters: t.field({
    type: [CharacterRef],
    authScopes: { account: true },
    args: { filter: t.arg({ type: CharacterFilter, required: false }) },
    resolve: (_root, { filter }, context) => context.services.characters.list(context.auth, filter ?? {}),
  }),
  character: t.field({
    type: CharacterRef,
    authScopes: { account: true },
    args: { slug: t.arg.string({ required: true }) },
    errors: { types: [NotFoundError] },
    resolve: (_root, { slug }, context) => context.services.characters.getBySlug(context.auth, slug),
  }),
}));

const CharacterReviewRef = builder.objectRef<CharacterReview>('CharacterReview').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    characterId: t.exposeID('characterId'),
    createdAt: t.field({ type: 'DateTime', resolve: (review) => review.createdAt }),
    isOwner: t.exposeBoolean('isOwner', { description: 'Whether the caller’s account wrote it.' }),
    locale: t.exposeString('locale', { nullable: true }),
    message: t.exposeString('message', { nullable: true }),
    rating: t.exposeInt('rating', { description: '1 to 5' }),
    userAvatarUrl: t.exposeString('userAvatarUrl', { nullable: true }),
    username: t.exposeString('username'),
  }),
});

const CharacterReviewPageRef = builder.objectRef<CharacterReviewPage>('CharacterReviewPage').implement({
  fields: (t) => ({
    reviews: t.field({ type: [CharacterReviewRef], resolve: (page) => page.reviews }),
    page: t.int({ resolve: (page) => page.pagination.page }),
    pageSize: t.int({ resolve: (page) => page.pagination.pageSize }),
    total: t.int({ resolve: (page) => page.pagination.total }),
    totalPages: t.int({ resolve: (page) => page.pagination.totalPages }),
    averageRating: t.float({ resolve: (page) => page.summary.averageRating }),
  }),
});

builder.queryFields((t) => ({
  characterReviews: t.field({
    type: CharacterReviewPageRef,
    description: 'A character’s reviews, newest first, with the average rating.',
    authScopes: { account: true },
    args: {
      slug: t.arg.string({ required: true }),
      page: t.arg.int({ required: false, description: 'From 1 (default 1)' }),
      pageSize: t.arg.int({ required: false, description: '1 to 100 (default 20)' }),
    },
    errors: { types: [NotFoundError] },
    resolve: (_root, args, context) =>
      context.services.characterReviews.list(context.auth, args.slug, { page: args.page, pageSize: args.pageSize }),
  }),
}));
