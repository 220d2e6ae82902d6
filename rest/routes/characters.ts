import { z } from 'zod';
import { CharacterListQuery, type Character } from '../../src/characters/character.service.ts';
import { iso, json, queryObject, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';

/** The public character record. */
export function characterWire(character: Character): { [field: string]: JsonValue } {
  return {
    adult: character.adult,
    author: character.author,
    createdAt: iso(character.createdAt),
    updatedAt: iso(character.updatedAt),
    description: character.description,
    featured: character.featured,
    id: character.id,
    name: character.name,
    slug: character.slug,
    shareUrl: character.shareUrl,
    photoUrl: character.photoUrl,
    stats: {
      averageRating: character.stats.averageRating,
      imports: character.stats.imports,
      ratingCount: character.stats.ratingCount,
      ratingSum: character.stats.ratingSum,
      userRating: character.stats.userRating ?? 0,
    },
    tags: character.tags,
    webEnabled: character.webEnabled,
    modelId: character.modelId,
  };
}

const CharacterRecord = z.object({
  adult: z.boolean(),
  author: z.string(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  description: z.string(),
  featured: z.boolean(),
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  shareUrl: z.string().nullable(),
  photoUrl: z.string().nullable(),
  stats: z.object({
    averageRating: z.number(),
    imports: z.number().int(),
    ratingCount: z.number().int(),
    ratingSum: z.number().int(),
    userRating: z.number().int(),
  }),
  tags: z.array(z.string()),
  webEnabled: z.boolean(),
  modelId: z.string(),
});
const tags = ['Characters'];

export const characterRoutes: Route[] = [
  {
    method: 'GET',
    path: '/characters',
    access: 'account',
    doc: {
      summary: 'List characters (search, tags, modelId, isAdult, sort, pagination)',
      tags,
      query: CharacterListQuery,
      response: z.object({ object: z.literal('list'), data: z.array(CharacterRecord) }),
    },
    async handler({ services, auth, url }) {
      const characters = await services.characters.list(auth, queryObject(url));
      return json({ object: 'list', data: characters.map(characterWire) });
    },
  },
  {
    method: 'GET',
    path: '/characters/:slug',
    access: 'account',
    doc: {
      summary: 'One character by slug',
      tags,
      response: z.object({ object: z.literal('character'), data: CharacterRecord }),
    },
    async handler({ services, auth, params }) {
      return json({
        data: characterWire(await services.characters.getBySlug(auth, params.slug ?? '')),
        object: 'character',
      });
    },
  },
];
