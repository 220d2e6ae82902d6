import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { runCli } from '../../src/cli/program.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface ReviewPage {
  object: string;
  data: { username: string; rating: number; isOwner: boolean; message: string | null; characterId: string }[];
  pagination: { page: number; pageSize: number; total: number; totalPages: number };
  summary: { averageRating: number; totalReviews: number };
}

describe(`GET /characters/{slug}/reviews (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;

  beforeAll(async () => {
    t = await createTestApp();
    const { account, adminKey } = await t.app.services.accounts.create(operator(), { name: 'reviewer' });
    secret = adminKey.secret;
    accountId = account.id;
  });
  afterAll(async () => t.close());

  const cli = async (argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, t.app.services, { out: (s) => (out += s), err: (s) => (err += s) });
    return { code, out, err };
  };

  it('serves an empty page for a character without reviews', async () => {
    const response = await t.call('/api/v1/characters/pirate-storyteller/reviews', { key: secret });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: 'list',
      data: [],
      pagination: { page: 1, pageSize: 20, total: 0, totalPages: 0 },
      summary: { averageRating: 0, totalReviews: 0 },
    });
  });

  it('lists reviews the operator added, newest first, with paging headers and the owner flag', async () => {
    for (const [rating, username] of [
      [5, 'ada'],
      [4, 'grace'],
      [2, 'linus'],
    ] as const) {
      const added = await cli([
        'characters',
        'review-add',
        'lagoon-guide',
        '--rating',
        String(rating),
        '--username',
        username,
        '--message',
        `${username} says hi`,
        ...(username === 'grace' ? ['--account', accountId] : []),
        '--json',
      ]);
      expect(added.err).toBe('');
      expect(added.code).toBe(0);
    }
    const response = await t.call('/api/v1/characters/lagoon-guide/reviews?pageSize=2', { key: secret });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-pagination-total')).toBe('3');
    expect(response.headers.get('x-pagination-total-pages')).toBe('2');
    expect(response.headers.get('x-pagination-limit')).toBe('2');
    expect(response.headers.get('x-pagination-page')).toBe('1');
    const page = (await response.json()) as ReviewPage;
    expect(page.data.map((r) => r.username)).toEqual(['linus', 'grace']);
    expect(page.data.map((r) => r.isOwner)).toEqual([false, true]);
    expect(page.summary).toEqual({ averageRating: 3.67, totalReviews: 3 });
    const second = (await (
      await t.call('/api/v1/characters/lagoon-guide/reviews?pageSize=2&page=2', { key: secret })
    ).json()) as ReviewPage;
    expect(second.data.map((r) => r.username)).toEqual(['ada']);
    const character = (await (await t.call('/api/v1/characters/lagoon-guide', { key: secret })).json()) as {
      data: { stats: { ratingCount: number; ratingSum: number } };
    };
    expect(character.data.stats).toMatchObject({ ratingCount: 3, ratingSum: 11 });
  });

  it('answers 404 for an unknown character, 400 for bad paging, 402 (x402 discovery) without a key', async () => {
    expect((await t.call('/api/v1/characters/nobody/reviews', { key: secret })).status).toBe(404);
    for (const query of ['page=0', 'pageSize=101', 'pageSize=x'])
      expect((await t.call(`/api/v1/characters/lagoon-guide/reviews?${query}`, { key: secret })).status, query).toBe(
        400,
      );
    expect((await t.call('/api/v1/characters/lagoon-guide/reviews', { key: null })).status).toBe(402);
    const bad = await cli(['characters', 'review-add', 'lagoon-guide', '--rating', '6', '--username', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/rating/);
  });

  it('serves the same page over GraphQL', async () => {
    const result = await t.graphql<{
      characterReviews: {
        data: { reviews: { username: string; isOwner: boolean }[]; total: number; averageRating: number };
      };
    }>(
      `{ characterReviews(slug: "lagoon-guide", pageSize: 1) {
          ... on QueryCharacterReviewsSuccess { data { reviews { username isOwner } total averageRating } } } }`,
      {},
      secret,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.characterReviews.data).toEqual({
      reviews: [{ username: 'linus', isOwner: false }],
      total: 3,
      averageRating: 3.67,
    });
  });
});
