import { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { Database } from '../db/database.ts';
import { clip, NotFoundError } from '../errors.ts';
import type { OperatorConfig } from '../operator-config/schema.ts';
import { parseInput, storedString } from '../validation.ts';
import * as repo from './character.repository.ts';
import { CHARACTER_SORTS, type CharacterRow, type CharacterWrite } from './character.repository.ts';

/** A character (chat persona) with every field of the public character record, plus its system prompt. */
export interface Character extends Omit<CharacterWrite, 'tags'> {
  id: string;
  tags: string[];
  createdAt: Date;
  updatedAt: Date;
  stats: {
    averageRating: number;
    imports: number;
    ratingCount: number;
    ratingSum: number;
    /** The caller's own rating; null while nobody-specific ratings are kept. */
    userRating: number | null;
  };
}

const blankToUndefined = (value: unknown) =>
  value === null || (typeof value === 'string' && value.trim() === '') ? undefined : value;
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());
const withDefault = <T extends z.ZodType>(schema: T, fallback: z.input<T> & z.output<T>) =>
  z.preprocess(blankToUndefined, schema.default(fallback as never));

/**
 * `GET /characters` filters, shared by REST and GraphQL: query-string friendly (numbers and
 * booleans may arrive as strings; `tags` is a comma-separated string or a list; blanks count as absent).
 */
export const CharacterListQuery = z.object({
  search: optional(storedString().trim().max(200)),
  tags: optional(
    z.union([storedString(), z.array(storedString())]).transform((value) =>
      (Array.isArray(value) ? value : [value])
        .flatMap((tag) => tag.split(','))
        .map((tag) => tag.trim())
        .filter(Boolean),
    ),
  ),
  modelId: optional(storedString().min(1)),
  isAdult: optional(z.preprocess((value) => (typeof value === 'boolean' ? String(value) : value), z.stringbool())),
  limit: withDefault(z.coerce.number().int().min(1).max(100), 50),
  offset: withDefault(z.coerce.number().int().min(0), 0),
  sortBy: withDefault(z.enum(CHARACTER_SORTS), 'featured'),
  sortOrder: withDefault(z.enum(['asc', 'desc']), 'desc'),
});
export type CharacterListQuery = z.output<typeof CharacterListQuery>;
export type CharacterListQueryInput = z.input<typeof CharacterListQuery>;

const CharacterSlug = z.object({ slug: storedString() });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Characters (chat personas): syncs the configured ones to the DB and serves the public list and lookups. Talks to the character repository. */
export class CharacterService {
  constructor(private readonly deps: { db: Database }) {}

  /** Stores the configured characters; characters no longer configured become inactive (their ids and stats are kept). */
  async syncFromConfig(config: OperatorConfig): Promise<void> {
    await repo.replaceCharacters(
      this.deps.db,
      config.characters.map((character) => ({
        slug: character.slug,
        name: character.name,
        description: character.description,
        author: character.author,
        adult: character.adult,
        featured: character.featured,
        tags: character.tags,
        modelId: character.modelId,
        webEnabled: character.webEnabled,
        systemPrompt: character.systemPrompt,
        photoUrl: character.photoUrl ?? null,
        shareUrl: character.shareUrl ?? null,
      })),
    );
  }

  /** One page of active characters; `filters` is validated with {@link CharacterListQuery} (400 on failure). */
  async list(auth: AuthContext, filters: unknown = {}): Promise<Character[]> {
    requireAccount(auth);
    const query = parseInput(CharacterListQuery, filters ?? {}, 'Invalid character query');
    const rows = await repo.listCharacters(this.deps.db, query);
    return rows.map(rowToCharacter);
  }

  async getBySlug(auth: AuthContext, slug: string): Promise<Character> {
    requireAccount(auth);
    parseInput(CharacterSlug, { slug });
    const row = await repo.getCharacterBySlug(this.deps.db, slug);
    if (!row) throw new NotFoundError(`Character ${clip(slug)} not found`, 'CHARACTER_NOT_FOUND');
    return rowToCharacter(row);
  }

  /** Active characters by id in id order, null for unknown ids; for dataloaders. */
  async findByIds(auth: AuthContext, ids: readonly string[]): Promise<(Character | null)[]> {
    requireAccount(auth);
    const rows = await repo.getCharactersByIds(
      this.deps.db,
      ids.filter((id) => UUID.test(id)),
    );
    const byId = new Map(rows.map((row) => [row.id, rowToCharacter(row)]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  }
}

export function rowToCharacter(row: CharacterRow): Character {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    author: row.author,
    adult: row.adult,
    featured: row.featured,
    tags: Array.isArray(row.tags) ? row.tags.filter((tag): tag is string => typeof tag === 'string') : [],
    modelId: row.model_id,
    webEnabled: row.web_enabled,
    systemPrompt: row.system_prompt,
    photoUrl: row.photo_url,
    shareUrl: row.share_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    stats: {
      averageRating: row.rating_count > 0 ? row.rating_sum / row.rating_count : 0,
      imports: row.imports,
      ratingCount: row.rating_count,
      ratingSum: row.rating_sum,
      userRating: null,
    },
  };
}
