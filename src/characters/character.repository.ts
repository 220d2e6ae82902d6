import { sql, type Expression, type SqlBool } from 'kysely';
import type { Database } from '../db/database.ts';

export const CHARACTER_SORTS = ['featured', 'mostRecent', 'imports', 'highestRating'] as const;
export type CharacterSort = (typeof CHARACTER_SORTS)[number];

export interface CharacterWrite {
  slug: string;
  name: string;
  description: string;
  author: string;
  adult: boolean;
  featured: boolean;
  tags: readonly string[];
  modelId: string;
  webEnabled: boolean;
  systemPrompt: string;
  photoUrl: string | null;
  shareUrl: string | null;
}

export interface CharacterFilter {
  search?: string | undefined;
  /** Any of these tags (case-insensitive). */
  tags?: readonly string[] | undefined;
  modelId?: string | undefined;
  isAdult?: boolean | undefined;
  limit: number;
  offset: number;
  sortBy: CharacterSort;
  sortOrder: 'asc' | 'desc';
}

const characterColumns = [
  'id',
  'slug',
  'name',
  'description',
  'author',
  'adult',
  'featured',
  'tags',
  'model_id',
  'web_enabled',
  'system_prompt',
  'photo_url',
  'share_url',
  'imports',
  'rating_count',
  'rating_sum',
  'created_at',
  'updated_at',
] as const;

export type CharacterRow = Awaited<ReturnType<typeof getCharacterBySlug>> & object;

const CHARACTERS_LOCK = sql`select pg_advisory_xact_lock(hashtext('lagoon.characters'))`;

/**
 * Makes the stored characters match the config, in one transaction: upserts by slug (ids, stats and
 * `created_at` survive), deactivates characters no longer configured. `updated_at` moves only on a change.
 */
export async function replaceCharacters(db: Database, characters: readonly CharacterWrite[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await CHARACTERS_LOCK.execute(trx);
    for (const [position, character] of characters.entries()) {
      await trx
        .insertInto('characters')
        .values({
          slug: character.slug,
          name: character.name,
          description: character.description,
          author: character.author,
          adult: character.adult,
          featured: character.featured,
          tags: JSON.stringify(character.tags),
          model_id: character.modelId,
          web_enabled: character.webEnabled,
          system_prompt: character.systemPrompt,
          photo_url: character.photoUrl,
          share_url: character.shareUrl,
          position,
          active: true,
        })
        .onConflict((oc) =>
          oc.column('slug').doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            description: eb.ref('excluded.description'),
            author: eb.ref('excluded.author'),
            adult: eb.ref('excluded.adult'),
            featured: eb.ref('excluded.featured'),
            tags: eb.ref('excluded.tags'),
            model_id: eb.ref('excluded.model_id'),
            web_enabled: eb.ref('excluded.web_enabled'),
            system_prompt: eb.ref('excluded.system_prompt'),
            photo_url: eb.ref('excluded.photo_url'),
            share_url: eb.ref('excluded.share_url'),
            position: eb.ref('excluded.position'),
            active: true,
            updated_at: sql<Date>`case when
              (characters.name, characters.description, characters.author, characters.adult, characters.featured, characters.tags,
               characters.model_id, characters.web_enabled, characters.system_prompt, characters.photo_url, characters.share_url, characters.active)
              is distinct from
              (excluded.name, excluded.description, excluded.author, excluded.adult, excluded.featured, excluded.tags,
               excluded.model_id, excluded.web_enabled, excluded.system_prompt, excluded.photo_url, excluded.share_url, true)
              then now() else characters.updated_at end`,
          })),
        )
        .execute();
    }
    let deactivate = trx
      .updateTable('characters')
      .set({ active: false, updated_at: sql`now()` })
      .where('active', '=', true);
    if (characters.length > 0)
      deactivate = deactivate.where(
        'slug',
        'not in',
        characters.map((character) => character.slug),
      );
    await deactivate.execute();
  });
}

/** Active characters matching the filter, sorted (ties in config order), one page. */
export async function listCharacters(db: Database, filter: CharacterFilter): Promise<CharacterRow[]> {
  let query = db.selectFrom('characters').select(characterColumns).where('active', '=', true);
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb('name', 'ilike', pattern),
        eb('description', 'ilike', pattern),
        sql<SqlBool>`exists (select 1 from jsonb_array_elements_text(characters.tags) as t(tag) where t.tag ilike ${pattern})`,
      ]),
    );
  }
  if (filter.tags && filter.tags.length > 0) {
    const lowered = filter.tags.map((tag) => tag.toLowerCase());
    query = query.where(
      sql<SqlBool>`exists (select 1 from jsonb_array_elements_text(characters.tags) as t(tag) where lower(t.tag) in (${sql.join(lowered)}))`,
    );
  }
  if (filter.modelId !== undefined) query = query.where('model_id', '=', filter.modelId);
  if (filter.isAdult !== undefined) query = query.where('adult', '=', filter.isAdult);

  const direction = filter.sortOrder;
  const sortKey: Record<CharacterSort, Expression<unknown>> = {
    featured: sql`characters.featured`,
    mostRecent: sql`characters.created_at`,
    imports: sql`characters.imports`,
    highestRating: sql`case when characters.rating_count > 0 then characters.rating_sum::float8 / characters.rating_count else 0 end`,
  };
  return query
    .orderBy(sortKey[filter.sortBy], direction)
    .orderBy('position', 'asc')
    .orderBy('slug', 'asc')
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
}

export async function getCharacterBySlug(db: Database, slug: string) {
  return db
    .selectFrom('characters')
    .select(characterColumns)
    .where('slug', '=', slug)
    .where('active', '=', true)
    .executeTakeFirst();
}

export async function getCharactersByIds(db: Database, ids: readonly string[]): Promise<CharacterRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('characters')
    .select(characterColumns)
    .where('id', 'in', [...ids])
    .where('active', '=', true)
    .execute();
}
