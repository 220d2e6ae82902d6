import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { fastestOf, timed } from '../helpers/time-scale.ts';

/*
 * Input the database cannot hold or that overflows a column is refused with a 400 naming the field (it used to be a
 * 500 from inside the database). The fuzz test (fuzz.test.ts) covers every route; these are the cases found first.
 */

interface ErrorBody {
  error: string;
  code: string;
  details?: unknown;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`Bad input: 400s, not 500s (${testDatabaseKind})`, () => {
  let t: TestApp;
  let inference: string;
  let keyId: string;

  beforeAll(async () => {
    t = await createTestApp();
    const account = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' });
    inference = account.secret;
    keyId = account.keyId;
  });
  afterAll(async () => t.close());

  const refused = async (response: Response, path: string) => {
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(400);
    const body = JSON.parse(text) as ErrorBody;
    expect(body).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringContaining(path) });
    expect(body.issues?.[0]?.path.join('.')).toBe(path);
    return body;
  };
  const chat = (extra: Record<string, unknown>) =>
    t.call('/api/v1/chat/completions', {
      key: inference,
      body: { model: 'lagoon-sim-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8, ...extra },
    });

  describe('the NUL character, which PostgreSQL text cannot hold', () => {
    it('should refuse it in an API key description, on create and on update', async () => {
      const created = await refused(
        await t.call('/api/v1/api_keys', { body: { apiKeyType: 'INFERENCE', description: 'ti\u0000de' } }),
        'description',
      );
      expect(created.error).toMatch(/NUL/);
      await refused(
        await t.call('/api/v1/api_keys', { method: 'PATCH', body: { id: keyId, description: '\u0000' } }),
        'description',
      );
    });

    it('should refuse it in service_parameters.character_slug (and its alias) before anything is charged', async () => {
      await refused(
        await chat({ service_parameters: { character_slug: 'lagoon-guide\u0000' } }),
        'service_parameters.character_slug',
      );
      await refused(
        await chat({ venice_parameters: { character_slug: '\u0000' } }),
        'venice_parameters.character_slug',
      );
    });

    it('should refuse it in a character slug in the path and in the character filters', async () => {
      await refused(await t.call('/api/v1/characters/%00', { key: inference }), 'slug');
      await refused(await t.call('/api/v1/characters/lagoon%00guide', { key: inference }), 'slug');
      await refused(await t.call('/api/v1/characters?search=%00', { key: inference }), 'search');
      await refused(await t.call('/api/v1/characters?tags=a,%00', { key: inference }), 'tags');
      await refused(await t.call('/api/v1/characters?modelId=%00', { key: inference }), 'modelId');
      expect((await t.call('/api/v1/characters/lagoon-guide', { key: inference })).status).toBe(200);
    });
  });

  describe('numbers and dates past what the database holds', () => {
    it('should bound a consumption limit to what its bigint column holds', async () => {
      const create = (usd: unknown) =>
        t.call('/api/v1/api_keys', {
          body: { apiKeyType: 'INFERENCE', description: 'limit', consumptionLimit: { usd } },
        });
      for (const usd of [1e10, 1e21, '9223372036.854775808', '1e30']) {
        const body = await refused(await create(usd), 'consumptionLimit.usd');
        expect(body.error).toContain('at most 9223372036.854775807');
      }
      const largest = await create('9223372036.854775807');
      expect(largest.status).toBe(200);
      expect(
        ((await largest.json()) as { data: { consumptionLimit: { usd: number } } }).data.consumptionLimit.usd,
      ).toBe(9_223_372_036.854_776);
    });

    it('should refuse an exponent that would build a huge integer at once, not after seconds of CPU', async () => {
      const refuse = (usd: string) =>
        t.call('/api/v1/api_keys', { body: { apiKeyType: 'INFERENCE', description: 'x', consumptionLimit: { usd } } });
      // An ordinary refusal, timed in the same run, is the yardstick (a loaded machine slows both alike).
      const ordinary = await fastestOf(3, () => timed(async () => (await refuse('abc')).text()));
      let body: ErrorBody | undefined;
      const huge = await timed(async () => (body = await refused(await refuse('1e999999999'), 'consumptionLimit.usd')));
      expect(body?.error).toContain('too large');
      // The old parser spent about 1.7 s on 1e9999999 alone and would run for hours on this one.
      expect(huge).toBeLessThan(Math.max(1_000, ordinary * 50));
    });

    it('should answer a usage export with a date at either end of the calendar, not fail in the database', async () => {
      for (const query of [
        'startDate=9999-12-31',
        'endDate=9999-12-31',
        'startDate=0000-01-01',
        'startDate=0001-01-01T00:00:00%2B14:00',
        'startDate=1900-01-01&endDate=9999-12-31',
        'startDate=9999-12-31T23:59:59.999Z',
      ]) {
        for (const accept of ['application/json', 'text/csv']) {
          const response = await t.call(`/api/v1/billing/usage?${query}`, { headers: { accept } });
          expect(response.status, `${query} ${accept}: ${await response.clone().text()}`).toBe(200);
          await response.text();
        }
      }
      const page = (await (await t.call('/api/v1/billing/usage?startDate=9999-12-31')).json()) as {
        data: unknown[];
        pagination: { total: number };
      };
      expect(page).toMatchObject({ data: [], pagination: { total: 0 } });
      const graphql = await t.graphql<{ usage: { edges: unknown[] } }>(
        '{ usage(filter: { startDate: "9999-12-31T00:00:00Z" }) { edges { cursor } } }',
      );
      expect(graphql).toEqual({ data: { usage: { edges: [] } } });
    });

    it('should refuse analytics days the series cannot hold', async () => {
      await refused(
        await t.call('/api/v1/billing/usage-analytics?startDate=0000-01-01&endDate=0000-01-05'),
        'startDate',
      );
      expect((await t.call('/api/v1/billing/usage-analytics?startDate=9999-12-01&endDate=9999-12-31')).status).toBe(
        200,
      );
    });
  });
});
