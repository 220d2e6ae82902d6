import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymous, type AuthContext } from '../../src/auth/auth-context.ts';
import { CharacterListQuery, CharacterService } from '../../src/characters/character.service.ts';
import { NotFoundError, ValidationError } from '../../src/errors.ts';
import { parseOperatorConfig } from '../../src/operator-config/load.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';

// Characters are read by any key holder; the service checks that a key is present, not which account.
const auth: AuthContext = {
  kind: 'apiKey',
  requestId: 'test-request',
  accountId: '00000000-0000-4000-8000-000000000001',
  apiKey: {
    id: '00000000-0000-4000-8000-000000000002',
    accountId: '00000000-0000-4000-8000-000000000001',
    type: 'INFERENCE',
    limitPeriod: 'EPOCH',
    modelPrivacy: 'ALL',
    limits: { usd: null, diem: null },
    expiresAt: null,
  },
};
const character = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: slug
    .split('-')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' '),
  systemPrompt: `You are ${slug}.`,
  modelId: 'lagoon-sim-chat',
  ...extra,
});
// Built-ins first (lagoon-guide featured, pirate-storyteller), then these in order.
const config = parseOperatorConfig(
  {
    characters: [
      character('chef-remy', { description: 'A French CHEF who loves sauces', tags: ['Cooking', 'french'] }),
      character('noir-detective', {
        description: 'Hard-boiled mysteries',
        tags: ['fiction', 'mystery'],
        featured: true,
      }),
      character('vampire-count', {
        description: 'Gothic romance',
        tags: ['Fiction', 'romance'],
        adult: true,
        modelId: 'lagoon-sim-reasoner',
      }),
      character('math-tutor', {
        description: 'Patient algebra help',
        tags: ['education'],
        photoUrl: 'https://img.example/math.png',
      }),
    ],
  },
  'op.yaml',
);

describe(`${CharacterService.name} (${testDatabaseKind})`, () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let sut: CharacterService;
  const slugs = async (filters: unknown = {}) => (await sut.list(auth, filters)).map((c) => c.slug);
  const setStats = async (
    slug: string,
    stats: { imports?: number; rating_count?: number; rating_sum?: number; created_at?: Date },
  ) => handle.db.updateTable('characters').set(stats).where('slug', '=', slug).execute();

  beforeAll(async () => {
    handle = await createTestDatabase();
    sut = new CharacterService({ db: handle.db });
    await sut.syncFromConfig(config);
    await setStats('lagoon-guide', {
      imports: 5,
      rating_count: 2,
      rating_sum: 8,
      created_at: new Date('2026-01-01T00:00:00Z'),
    });
    await setStats('pirate-storyteller', {
      imports: 50,
      rating_count: 1,
      rating_sum: 3,
      created_at: new Date('2026-03-01T00:00:00Z'),
    });
    await setStats('chef-remy', {
      imports: 20,
      rating_count: 4,
      rating_sum: 18,
      created_at: new Date('2026-02-01T00:00:00Z'),
    });
    await setStats('noir-detective', { created_at: new Date('2026-05-01T00:00:00Z') });
    await setStats('vampire-count', { imports: 1, created_at: new Date('2026-04-01T00:00:00Z') });
    await setStats('math-tutor', { imports: 0, created_at: new Date('2025-12-01T00:00:00Z') });
  });
  afterAll(async () => handle.drop());

  it('should get a character by slug with every contract field and its system prompt', async () => {
    const remy = await sut.getBySlug(auth, 'chef-remy');
    expect(remy).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      slug: 'chef-remy',
      name: 'Chef Remy',
      description: 'A French CHEF who loves sauces',
      author: '',
      adult: false,
      featured: false,
      tags: ['Cooking', 'french'],
      modelId: 'lagoon-sim-chat',
      webEnabled: false,
      systemPrompt: 'You are chef-remy.',
      photoUrl: null,
      shareUrl: null,
      createdAt: new Date('2026-02-01T00:00:00Z'),
      updatedAt: expect.any(Date),
      stats: { averageRating: 4.5, imports: 20, ratingCount: 4, ratingSum: 18, userRating: null },
    });
    expect((await sut.getBySlug(auth, 'math-tutor')).photoUrl).toBe('https://img.example/math.png');
  });

  it('should throw CHARACTER_NOT_FOUND for an unknown slug', async () => {
    const error = await sut.getBySlug(auth, 'nobody').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: 'CHARACTER_NOT_FOUND', message: 'Character nobody not found' });
  });

  it('should list featured characters first by default, then in config order', async () => {
    expect(await slugs()).toEqual([
      'lagoon-guide',
      'noir-detective',
      'pirate-storyteller',
      'chef-remy',
      'vampire-count',
      'math-tutor',
    ]);
    expect(await slugs({ sortOrder: 'asc' })).toEqual([
      'pirate-storyteller',
      'chef-remy',
      'vampire-count',
      'math-tutor',
      'lagoon-guide',
      'noir-detective',
    ]);
  });

  it('should sort by most recent, imports and highest rating', async () => {
    expect(await slugs({ sortBy: 'mostRecent' })).toEqual([
      'noir-detective',
      'vampire-count',
      'pirate-storyteller',
      'chef-remy',
      'lagoon-guide',
      'math-tutor',
    ]);
    expect(await slugs({ sortBy: 'imports', limit: 3 })).toEqual(['pirate-storyteller', 'chef-remy', 'lagoon-guide']);
    expect(await slugs({ sortBy: 'imports', sortOrder: 'asc', limit: '2' })).toEqual(['noir-detective', 'math-tutor']);
    expect(await slugs({ sortBy: 'highestRating', limit: 3 })).toEqual([
      'chef-remy',
      'lagoon-guide',
      'pirate-storyteller',
    ]);
  });

  it('should search name, description and tags case-insensitively', async () => {
    expect(await slugs({ search: 'chef' })).toEqual(['chef-remy']);
    expect(await slugs({ search: 'MYSTER' })).toEqual(['noir-detective']);
    expect(await slugs({ search: 'COOK' })).toEqual(['chef-remy']);
    expect(await slugs({ search: '100%' })).toEqual([]);
  });

  it('should filter by any of the tags, by model and by adult flag', async () => {
    expect(await slugs({ tags: 'fiction' })).toEqual(['noir-detective', 'pirate-storyteller', 'vampire-count']);
    expect(await slugs({ tags: 'education,COOKING' })).toEqual(['chef-remy', 'math-tutor']);
    expect(await slugs({ tags: ['romance', 'mystery'] })).toEqual(['noir-detective', 'vampire-count']);
    expect(await slugs({ modelId: 'lagoon-sim-reasoner' })).toEqual(['vampire-count']);
    expect(await slugs({ isAdult: 'true' })).toEqual(['vampire-count']);
    expect(await slugs({ isAdult: false, tags: 'fiction' })).toEqual(['noir-detective', 'pirate-storyteller']);
  });

  it('should page with limit and offset', async () => {
    expect(await slugs({ limit: 2, offset: 1 })).toEqual(['noir-detective', 'pirate-storyteller']);
    expect(await slugs({ offset: '6' })).toEqual([]);
    expect(CharacterListQuery.parse({})).toEqual({ limit: 50, offset: 0, sortBy: 'featured', sortOrder: 'desc' });
  });

  it('should reject invalid filters with a validation error naming the field', async () => {
    for (const [filters, field] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: '101' }, 'limit'],
      [{ offset: -1 }, 'offset'],
      [{ sortBy: 'newest' }, 'sortBy'],
      [{ sortOrder: 'up' }, 'sortOrder'],
      [{ isAdult: 'maybe' }, 'isAdult'],
    ] as const) {
      const error = await sut.list(auth, filters).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([[field]]);
    }
  });

  it('should find characters by id in id order with null for unknown and malformed ids', async () => {
    const [guide, remy] = await Promise.all([sut.getBySlug(auth, 'lagoon-guide'), sut.getBySlug(auth, 'chef-remy')]);
    const found = await sut.findByIds(auth, [remy.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000', guide.id]);
    expect(found.map((c) => c?.slug ?? null)).toEqual(['chef-remy', null, null, 'lagoon-guide']);
  });

  it('should deactivate a character dropped from the config and keep its id and stats when it returns', async () => {
    const before = await sut.getBySlug(auth, 'chef-remy');
    await sut.syncFromConfig(
      parseOperatorConfig({ characters: [{ slug: 'pirate-storyteller', disabled: true }] }, 'op.yaml'),
    );
    expect(await slugs()).toEqual(['lagoon-guide']);
    await expect(sut.getBySlug(auth, 'chef-remy')).rejects.toMatchObject({ code: 'CHARACTER_NOT_FOUND' });
    expect(await sut.findByIds(auth, [before.id])).toEqual([null]);

    await sut.syncFromConfig(config);
    const after = await sut.getBySlug(auth, 'chef-remy');
    expect(after).toMatchObject({ id: before.id, stats: before.stats, createdAt: before.createdAt });
  });

  it('should refuse callers without a key', async () => {
    await expect(sut.list(anonymous('x'), {})).rejects.toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    await expect(sut.getBySlug(anonymous('x'), 'lagoon-guide')).rejects.toMatchObject({
      code: 'AUTHENTICATION_FAILED',
    });
  });
});
