import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { operator } from '../../src/auth/auth-context.ts';
import { parseNano } from '../../src/billing/money.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';

/**
 * Counts the statements a measured call sends through the Kysely instance it is attached to (`measure`). Work that
 * an earlier call left behind (a charge's balance and spend-limit checks, src/webhooks/spend-watch.ts) runs in that
 * call's async context, so it is not counted against the next one.
 */
class QueryCounter implements KyselyPlugin {
  count = 0;
  private readonly measured = new AsyncLocalStorage<object>();
  private current: object | undefined;

  async measure<T>(call: () => Promise<T>): Promise<{ result: T; queries: number }> {
    const token = {};
    this.current = token;
    this.count = 0;
    const result = await this.measured.run(token, call);
    return { result, queries: this.count };
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.current !== undefined && this.measured.getStore() === this.current) this.count += 1;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

interface KeyWithUsage {
  id: string;
  usage: { trailingSevenDays: { usd: string }; currentPeriod: { usd: string } };
}

describe(`GraphQL apiKeys usage batching (${testDatabaseKind})`, () => {
  const ADMIN = 'query-count-admin-key';
  const counter = new QueryCounter();
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let app: App;

  beforeAll(async () => {
    handle = await createTestDatabase();
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
      LAGOON_LAST_USED_FLUSH_SECONDS: '3600',
    });
    app = await createApp(config, {
      database: { ...handle, db: handle.db.withPlugin(counter) },
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await app.close();
    await handle.drop();
  });

  const gql = async <T = { apiKeys: KeyWithUsage[] }>(query: string) => {
    const response = await app.fetch(
      new Request('http://lagoon.test/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      }),
    );
    return (await response.json()) as { data?: T; errors?: unknown[] };
  };
  const KEYS_WITH_USAGE =
    '{ apiKeys { id description usage { trailingSevenDays { usd diem vcu } currentPeriod { usd diem } } } }';

  async function countedRequest() {
    const { result, queries } = await counter.measure(() => gql(KEYS_WITH_USAGE));
    expect(result.errors).toBeUndefined();
    return { queries, keys: result.data!.apiKeys };
  }

  it('should load usage for every key in one batched query set, however many keys there are', async () => {
    const services = app.services;
    const admin = await services.auth.authenticate({ authorization: `Bearer ${ADMIN}` }, 'x');
    if (admin.kind !== 'apiKey') throw new Error('expected an API key context');
    await services.accounts.credit(operator(), { accountId: admin.accountId, currency: 'USD', amount: '10' });
    await services.billing.runMetered(admin, {
      maxCost: { usd: parseNano('0.3'), diem: parseNano('0.3') },
      run: async () => undefined,
      usage: () => ({
        modelId: 'm',
        lines: [
          { sku: 's', units: '1', pricePerUnitUsd: '0.3', cost: { usd: parseNano('0.3'), diem: parseNano('0.3') } },
        ],
      }),
    });
    await gql(KEYS_WITH_USAGE); // warms the key cache: authentication then costs no query
    const few = await countedRequest();
    expect(few.keys).toHaveLength(1);
    expect(few.keys[0]?.usage.trailingSevenDays.usd).toBe('0.3');
    for (let i = 0; i < 12; i += 1)
      await services.apiKeys.create(admin, { apiKeyType: 'INFERENCE', description: `key ${i}` });
    const many = await countedRequest();
    expect(many.keys).toHaveLength(13);
    expect(many.queries).toBe(few.queries);
    expect(many.queries).toBeLessThanOrEqual(3); // the key list, current-period spend, trailing seven days
  });

  it('should resolve the keys of N usage entries with one query', async () => {
    const services = app.services;
    const admin = await services.auth.authenticate({ authorization: `Bearer ${ADMIN}` }, 'x');
    if (admin.kind !== 'apiKey') throw new Error('expected an API key context');
    for (let i = 0; i < 8; i += 1) {
      const { secret } = await services.apiKeys.create(admin, { apiKeyType: 'INFERENCE', description: `payer ${i}` });
      const payer = await services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'x');
      await services.billing.runMetered(payer, {
        maxCost: { usd: parseNano('0.01'), diem: parseNano('0.01') },
        run: async () => undefined,
        usage: () => ({
          modelId: 'm',
          lines: [
            {
              sku: 's',
              units: '1',
              pricePerUnitUsd: '0.01',
              cost: { usd: parseNano('0.01'), diem: parseNano('0.01') },
            },
          ],
        }),
      });
    }
    const counted = async (query: string) => {
      const { result, queries } = await counter.measure(() =>
        gql<{ usage: { edges: { node: { apiKeyId: string; apiKey?: { id: string } } }[] } }>(query),
      );
      expect(result.errors).toBeUndefined();
      return { queries, nodes: result.data!.usage.edges.map((e) => e.node) };
    };
    await counted('{ usage(first: 50) { edges { node { apiKeyId } } } }'); // writes any pending charges first
    const plain = await counted('{ usage(first: 50) { edges { node { apiKeyId } } } }');
    const linked = await counted('{ usage(first: 50) { edges { node { apiKeyId apiKey { id description } } } } }');
    expect(new Set(linked.nodes.map((n) => n.apiKeyId)).size).toBeGreaterThanOrEqual(9);
    for (const node of linked.nodes) expect(node.apiKey?.id).toBe(node.apiKeyId);
    expect(linked.queries - plain.queries).toBe(1);
  });
});
