import type { Character } from '../../src/characters/character.service.ts';
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
