import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOperatorConfig } from '../../src/operator-config/load.ts';
import { rpcRequest, startRpcTestApp, type RpcTestAccount, type RpcTestApp } from '../helpers/crypto-rpc.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startChainNode, type ChainNode } from '../helpers/rpc-node.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * The crypto RPC proxy's cost headers under the shipped compat file (examples/compat-original.yaml): its
 * `rpc.costHeaderPrefix` adds the names the original's clients read beside the contract's X-Service-RPC-*.
 */
describe(`REST crypto RPC cost headers with examples/compat-original.yaml (${testDatabaseKind})`, () => {
  let node: ChainNode;
  let t: RpcTestApp;
  let account: RpcTestAccount;

  beforeAll(async () => {
    node = await startChainNode();
    const compat = await readFile(new URL('../../examples/compat-original.yaml', import.meta.url), 'utf8');
    t = await startRpcTestApp(compat, { RPC_UPSTREAM_ETHEREUM_SEPOLIA: node.url });
    account = await t.account('1');
  }, scaled(60_000));

  afterAll(async () => {
    await t?.close();
    await node?.close();
  });

  it('sends X-Venice-RPC-Credits and X-Venice-RPC-Cost-USD with the same values as X-Service-RPC-*', async () => {
    const before = await account.usd();
    const single = await t.rpc('ethereum-sepolia', rpcRequest('eth_blockNumber', [], 1), { key: account.secret });
    expect(single.status).toBe(200);
    expect(single.headers.get('x-service-rpc-credits')).toBe('20');
    expect(single.headers.get('x-service-rpc-cost-usd')).toBe('0.00001250');
    expect(single.headers.get('x-venice-rpc-credits')).toBe('20');
    expect(single.headers.get('x-venice-rpc-cost-usd')).toBe('0.00001250');

    const batch = [rpcRequest('eth_chainId', [], 1), rpcRequest('eth_blockNumber', [], 2)];
    const both = await t.rpc('ethereum-sepolia', batch, { key: account.secret });
    expect(both.status).toBe(200);
    expect(both.headers.get('x-venice-rpc-credits')).toBe(both.headers.get('x-service-rpc-credits'));
    expect(both.headers.get('x-venice-rpc-cost-usd')).toBe(both.headers.get('x-service-rpc-cost-usd'));
    expect(both.headers.get('x-venice-rpc-credits')).toBe('40');

    // The second set of names is only more headers: each call is still charged once.
    const after = await account.usd();
    expect(before.amount - after.amount).toBe(60n * 625n);
  });

  it('refuses a prefix that cannot be a header name, naming the setting', () => {
    const bad = { rpc: { costHeaderPrefix: 'X Venice:' } };
    expect(() => parseOperatorConfig(bad, 'operator.yaml')).toThrow(/costHeaderPrefix/);
  });
});
