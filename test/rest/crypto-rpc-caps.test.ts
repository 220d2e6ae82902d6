import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { startRpcTestApp, rpcRequest, type RpcTestApp } from '../helpers/crypto-rpc.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startChainNode, startCountingProxy, type ChainNode, type CountingProxy } from '../helpers/rpc-node.ts';

const sharedThrough = process.env.REDIS_URL ? 'Redis' : 'process memory';

describe(`REST crypto RPC caps (${testDatabaseKind}, counters in ${sharedThrough})`, () => {
  let node: ChainNode;
  let proxy: CountingProxy;
  let t: RpcTestApp;
  let second: RpcTestApp;

  beforeAll(async () => {
    node = await startChainNode();
    proxy = await startCountingProxy(node.url);
    // Small caps so a test can reach them; the defaults are 100/min, 10M credits per 24 h).
    const config = [
      'rpc:',
      '  caps:',
      '    standard: { requestsPerMinute: 3, creditsPer24h: 100 }',
      '    staff: { requestsPerMinute: 6, creditsPer24h: 1000 }',
      '  networks:',
      `    ethereum-sepolia: { upstreams: ["${proxy.url}"] }`,
    ].join('\n');
    t = await startRpcTestApp(config);
    second = await startRpcTestApp(config, {}, t.app.database);
  });

  afterAll(async () => {
    await second.close();
    await t.close();
    await proxy.close();
    await node.close();
  });

  const expect429 = async (response: Response, cap: RegExp, limit: number, remaining: number) => {
    expect(response.status).toBe(429);
    const body = (await response.json()) as { error: string; code: string; customMessage: string };
    expect(body).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      error: expect.stringMatching(cap),
      customMessage: expect.stringMatching(cap),
    });
    expect(response.headers.get('x-ratelimit-limit')).toBe(String(limit));
    expect(response.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    return { body, reset };
  };

  it('should answer 429 past the requests-per-minute cap, naming it, with X-RateLimit-* headers and no charge', async () => {
    const account = await t.account('1');
    for (let i = 0; i < 3; i += 1)
      expect((await t.rpc('ethereum-sepolia', rpcRequest('eth_blockNumber'), { key: account.secret })).status).toBe(
        200,
      );
    const before = await account.usd();
    const usage = (await account.usage()).length;
    const calls = proxy.requests.length;
    const { body, reset } = await expect429(
      await t.rpc('ethereum-sepolia', rpcRequest('eth_blockNumber'), { key: account.secret }),
      /3 crypto RPC requests per minute/,
      3,
      0,
    );
    expect(body.customMessage).toContain('standard tier');
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    expect(proxy.requests.length).toBe(calls);
    expect(await account.usd()).toEqual(before);
    expect(await account.usage()).toHaveLength(usage);
  });

  it('should hold the most a request can cost against the 24 h credits, keep only what was charged, and refuse past the cap', async () => {
    const account = await t.account('1');
    const send = (body: unknown) => t.rpc('ethereum-sepolia', body, { key: account.secret });
    // Four items held at 80 credits that come back as errors: 20 are kept.
    const errors = await send([1, 2, 3, 4].map((id) => rpcRequest('eth_getBalance', ['bad'], id)));
    expect(errors.headers.get('x-service-rpc-credits')).toBe('20');
    await t.app.services.cryptoRpc.flush();
    // 20 + 80 = 100 fits the cap of 100 exactly.
    const batch = await send([1, 2, 3, 4].map((id) => rpcRequest('eth_blockNumber', [], id)));
    expect(batch.status).toBe(200);
    expect(batch.headers.get('x-service-rpc-credits')).toBe('80');
    const before = await account.usd();
    const calls = proxy.requests.length;
    const { body } = await expect429(
      await send(rpcRequest('eth_blockNumber')),
      /100 crypto RPC credits per rolling 24 hours/,
      100,
      0,
    );
    expect(body.customMessage).toContain('100 are spent and this request needs up to 20');
    expect(proxy.requests.length).toBe(calls);
    expect(await account.usd()).toEqual(before);
  });

  it('should refuse a single request larger than the whole credits cap without counting it', async () => {
    const account = await t.account('1');
    const big = Array.from({ length: 6 }, (_, id) => rpcRequest('eth_blockNumber', [], id)); // 120 credits
    await expect429(
      await t.rpc('ethereum-sepolia', big, { key: account.secret }),
      /credits per rolling 24 hours/,
      100,
      100,
    );
    expect((await t.rpc('ethereum-sepolia', big.slice(0, 5), { key: account.secret })).status).toBe(200);
  });

  it('should give the staff tier its higher caps (set by the operator)', async () => {
    const account = await t.account('1');
    await t.app.services.cryptoRpc.setTier(operator(), account.accountId, 'staff');
    for (let i = 0; i < 6; i += 1)
      expect((await t.rpc('ethereum-sepolia', rpcRequest('eth_blockNumber'), { key: account.secret })).status).toBe(
        200,
      );
    const { body } = await expect429(
      await t.rpc('ethereum-sepolia', rpcRequest('eth_blockNumber'), { key: account.secret }),
      /6 crypto RPC requests per minute/,
      6,
      0,
    );
    expect(body.customMessage).toContain('staff tier');
    await expect(t.app.services.cryptoRpc.setTier(operator(), account.accountId, 'gold')).rejects.toThrow(
      /standard, staff/,
    );
    await expect(
      t.app.services.cryptoRpc.setTier(operator(), '00000000-0000-4000-8000-000000000000', 'staff'),
    ).rejects.toThrow(/not found/);
  });

  it(`should count across processes through Redis when REDIS_URL is set, per process otherwise (now: ${sharedThrough})`, async () => {
    const account = await t.account('1');
    const send = (app: RpcTestApp) =>
      app.rpc('ethereum-sepolia', rpcRequest('eth_blockNumber'), { key: account.secret });
    for (const app of [t, second, t]) expect((await send(app)).status).toBe(200);
    const fourth = await send(second);
    if (process.env.REDIS_URL) await expect429(fourth, /requests per minute/, 3, 0);
    else expect(fourth.status).toBe(200); // the second process has seen only 2 requests
  });
});
