import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * An error quotes what was sent only in part: each quoted value at most 100 characters and an ellipsis, the first
 * 20 issues. A 900 KB bad value used to come back three times (message, issues, details): a 2.7 MB error body.
 */

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`Error bodies stay small whatever was sent (${testDatabaseKind})`, () => {
  let t: TestApp;
  let inference: string;

  beforeAll(async () => {
    t = await createTestApp();
    inference = (await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' })).secret;
  });
  afterAll(async () => t.close());

  const chat = (extra: Record<string, unknown>) =>
    t.call('/api/v1/chat/completions', {
      key: inference,
      body: { model: 'lagoon-sim-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8, ...extra },
    });

  const HUGE = 'x'.repeat(900_000);
  const small = async (response: Response) => {
    const text = await response.text();
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(text.length).toBeLessThan(4_000);
    return JSON.parse(text) as ErrorBody;
  };

  it('should cut a 900 KB bad value short in the message, the issues and the details', async () => {
    const body = await small(
      await t.call('/api/v1/api_keys', {
        body: { apiKeyType: 'INFERENCE', description: 'x', consumptionLimit: { usd: HUGE } },
      }),
    );
    expect(body.error).toContain(`"${'x'.repeat(100)}…"`);
    expect(body.issues?.[0]?.message).toContain('…');
  });

  it('should cut a 900 KB unknown field name, model name, slug and path short', async () => {
    const unknownKey = await small(
      await t.call('/api/v1/api_keys', { body: { apiKeyType: 'INFERENCE', description: 'x', [HUGE]: 1 } }),
    );
    expect(unknownKey.error).toContain('…');
    await small(await chat({ model: HUGE }));
    await small(await chat({ model: `lagoon-sim-chat:%zz${HUGE}` }));
    await small(await t.call(`/api/v1/models/${'m'.repeat(8_000)}`));
    await small(await t.call(`/api/v1/characters/${'c'.repeat(8_000)}`, { key: inference }));
    await small(await t.call(`/api/v1/no-such-route/${'r'.repeat(8_000)}`));
  });

  it('should list the first issues only when every one of 100,000 items is wrong', async () => {
    const body = await small(await chat({ messages: Array.from({ length: 100_000 }, () => 1) }));
    expect(body.issues?.length).toBeLessThanOrEqual(20);
  });
});
