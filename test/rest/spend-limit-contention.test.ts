import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startSearxng, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * A key limited to 0.30 USD on an account holding 100 USD, 200 searches (0.01 USD each) at once: 30 are served and
 * every refusal names the key's limit, never the balance (which covers them all), with leases on and off.
 */
const LIMIT_NANO = parseNano('0.30');

for (const leases of ['true', 'false']) {
  describe(`REST: refusals under contention name the key limit (leases ${leases}, ${testDatabaseKind})`, () => {
    let searxng: FakeUpstream;
    let dir: string;
    let t: TestApp;

    beforeAll(async () => {
      searxng = await startSearxng();
      dir = await mkdtemp(join(tmpdir(), 'lagoon-limit-'));
      const path = join(dir, 'operator.yaml');
      await writeFile(
        path,
        [
          'providers:',
          `  - { id: searx, type: searxng, baseUrl: "${searxng.url}", timeoutMs: 60000, maxRetries: 0 }`,
          'search:',
          '  google: searx',
        ].join('\n'),
      );
      t = await createTestApp({ LAGOON_CONFIG: path, LAGOON_BALANCE_LEASES: leases });
    });
    afterAll(async () => {
      await t.close();
      await Promise.all([searxng.close(), rm(dir, { recursive: true, force: true })]);
    });

    it('should refuse with API_KEY_USD_SPEND_LIMIT_EXCEEDED, and spend at most the limit', async () => {
      const { secret, keyId } = await createAccountWithKey(t.app.services, {
        credit: { USD: '100' },
        keyInput: { consumptionLimit: { usd: 0.3 } },
      });
      const responses = await Promise.all(
        Array.from({ length: 200 }, async (_, index) => {
          const response = await t.call('/api/v1/augment/search', {
            body: { query: `contention ${index}` },
            key: secret,
          });
          return { status: response.status, body: (await response.json()) as { code?: string } };
        }),
      );
      const refused = responses.filter((r) => r.status !== 200);
      const codes = new Map<string, number>();
      for (const r of refused)
        codes.set(`${r.status} ${r.body.code}`, (codes.get(`${r.status} ${r.body.code}`) ?? 0) + 1);
      expect(Object.fromEntries(codes)).toEqual({ '402 API_KEY_USD_SPEND_LIMIT_EXCEEDED': refused.length });
      await t.app.services.billing.flush();
      const spend = await t.app.database.db
        .selectFrom('api_key_spend')
        .select(['spent_usd', 'reserved_usd'])
        .where('api_key_id', '=', keyId)
        .executeTakeFirstOrThrow();
      expect(spend.spent_usd).toBeLessThanOrEqual(LIMIT_NANO);
      expect(spend.spent_usd).toBe(BigInt(responses.length - refused.length) * parseNano('0.01'));
      expect(responses.length - refused.length).toBeGreaterThan(0);
    });
  });
}
