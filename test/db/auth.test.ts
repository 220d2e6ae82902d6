import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/auth.service.ts';
import { operator } from '../../src/auth/auth-context.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';
import { testServiceOptions } from '../helpers/services.ts';

/** Counts every statement sent through the Kysely instance it is attached to. */
class QueryCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.count += 1;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describe(`${AuthService.name} (${testDatabaseKind})`, () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let services: Services;
  const counter = new QueryCounter();

  beforeAll(async () => {
    handle = await createTestDatabase();
    services = createServices(handle.db.withPlugin(counter), createLogger('silent'), testServiceOptions);
  });
  afterAll(async () => {
    await services.stop(); // leases and timers end before their database does
    await handle.drop();
  });

  it('should authenticate from the cache after the first lookup and batch lastUsedAt writes', async () => {
    const { adminKey } = await services.accounts.create(operator(), { name: 'cache' });
    const header = { authorization: `Bearer ${adminKey.secret}` };
    counter.count = 0;
    for (let i = 0; i < 50; i += 1) {
      const auth = await services.auth.authenticate(header, `r${i}`);
      expect(auth.kind).toBe('apiKey');
    }
    expect(counter.count).toBeLessThanOrEqual(1);
    await services.lastUsed.flush();
    expect(counter.count).toBeLessThanOrEqual(2);
    const row = await handle.db
      .selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', adminKey.key.id)
      .executeTakeFirstOrThrow();
    expect(row.last_used_at).toBeInstanceOf(Date);
  });

  it('should remember unknown keys briefly and forget revoked keys at once', async () => {
    counter.count = 0;
    for (let i = 0; i < 20; i += 1)
      await expect(services.auth.authenticate({ authorization: 'Bearer nope' }, 'x')).rejects.toMatchObject({
        code: 'AUTHENTICATION_FAILED',
      });
    expect(counter.count).toBe(1);

    const { adminKey } = await services.accounts.create(operator(), { name: 'revoke' });
    const adminAuth = await services.auth.authenticate({ authorization: `Bearer ${adminKey.secret}` }, 'x');
    const { key, secret } = await services.apiKeys.create(adminAuth, { apiKeyType: 'INFERENCE', description: 'short' });
    await services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'x');
    await services.apiKeys.revoke(adminAuth, key.id);
    await expect(services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'x')).rejects.toMatchObject({
      code: 'AUTHENTICATION_FAILED',
    });
  });

  it('should store only a SHA-256 hash of the secret', async () => {
    const { adminKey } = await services.accounts.create(operator(), { name: 'hash' });
    const rows = await handle.db.selectFrom('api_keys').selectAll().where('id', '=', adminKey.key.id).execute();
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(
      adminKey.secret,
    );
    expect(rows[0]?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]?.last6).toBe(adminKey.secret.slice(-6));
  });

  it('should apply a limit change made through PATCH to the next reservation', async () => {
    const { adminKey } = await services.accounts.create(operator(), { name: 'limits' });
    const accountId = adminKey.key.accountId;
    await services.accounts.credit(operator(), { accountId, currency: 'USD', amount: '10' });
    const adminAuth = await services.auth.authenticate({ authorization: `Bearer ${adminKey.secret}` }, 'x');
    await services.billing.reserve(adminAuth, { usd: 1_000_000_000n, diem: 1_000_000_000n });
    await services.apiKeys.update(adminAuth, { id: adminKey.key.id, consumptionLimit: { usd: 1 } });
    await expect(services.billing.reserve(adminAuth, { usd: 1n, diem: 1n })).rejects.toMatchObject({
      code: 'API_KEY_USD_SPEND_LIMIT_EXCEEDED',
    });
  });
});
