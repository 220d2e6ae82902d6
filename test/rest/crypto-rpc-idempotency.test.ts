import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRpcTestApp, rpcRequest, type RpcTestAccount, type RpcTestApp } from '../helpers/crypto-rpc.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import {
  answerStatus,
  delayed,
  startChainNode,
  startCountingProxy,
  type ChainNode,
  type CountingProxy,
} from '../helpers/rpc-node.ts';

describe(`REST crypto RPC Idempotency-Key (${testDatabaseKind})`, () => {
  let node: ChainNode;
  let proxy: CountingProxy;
  let t: RpcTestApp;
  let second: RpcTestApp;
  let account: RpcTestAccount;
  let config: string;

  beforeAll(async () => {
    node = await startChainNode();
    proxy = await startCountingProxy(node.url);
    config = [
      'rpc:',
      '  networks:',
      `    ethereum-sepolia: { upstreams: ["${proxy.url}"] }`,
      `    base-sepolia: { upstreams: ["${proxy.url}"] }`,
    ].join('\n');
    t = await startRpcTestApp(config);
    // A second API process on the same database: it shares the idempotency store, not this process's memory.
    second = await startRpcTestApp(config, {}, t.app.database);
    account = await t.account('1');
  });

  afterAll(async () => {
    await second.close();
    await t.close();
    await proxy.close();
    await node.close();
  });

  const send = (
    key: string,
    body: unknown,
    app: RpcTestApp = t,
    network = 'ethereum-sepolia',
    secret = account.secret,
  ) => app.rpc(network, body, { key: secret, headers: { 'idempotency-key': key } });
  const billing = (response: Response) => [
    response.headers.get('x-service-rpc-credits'),
    response.headers.get('x-service-rpc-cost-usd'),
  ];

  it('should replay the stored response with Idempotent-Replayed: true, without reaching the node or charging', async () => {
    const body = [
      rpcRequest('eth_blockNumber', [], 1),
      rpcRequest('debug_traceTransaction', ['0x' + '00'.repeat(32)], 2),
    ];
    const calls = proxy.requests.length;
    const first = await send('replay-1', body);
    const firstText = await first.text();
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const afterFirst = await account.usd();
    const usageAfterFirst = (await account.usage()).length;

    const replay = await send('replay-1', body);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(firstText);
    expect(billing(replay)).toEqual(billing(first));
    expect(billing(replay)).toEqual(['25', '0.00001563']);
    expect(replay.headers.get('content-type')).toBe('application/json');
    expect(replay.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(proxy.requests.length - calls).toBe(1);
    expect(await account.usd()).toEqual(afterFirst);
    expect(await account.usage()).toHaveLength(usageAfterFirst);
  });

  it('should replay from another process sharing the database', async () => {
    const calls = proxy.requests.length;
    const first = await send('cross-process', rpcRequest('eth_chainId'));
    const replay = await send('cross-process', rpcRequest('eth_chainId'), second);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(await first.text());
    expect(proxy.requests.length - calls).toBe(1);
  });

  it('should answer 400 when a key is reused with a different body or network', async () => {
    await send('reused', rpcRequest('eth_chainId'));
    const calls = proxy.requests.length;
    const before = await account.usd();
    for (const response of [
      await send('reused', rpcRequest('eth_blockNumber')),
      await send('reused', rpcRequest('eth_chainId'), t, 'base-sepolia'),
    ]) {
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        code: 'INVALID_REQUEST',
        error: expect.stringContaining('different request'),
      });
    }
    expect(proxy.requests.length).toBe(calls);
    expect(await account.usd()).toEqual(before);
  });

  it('should keep keys per account', async () => {
    const other = await t.account('1');
    await send('per-account', rpcRequest('eth_chainId'));
    const theirs = await send('per-account', rpcRequest('eth_blockNumber'), t, 'ethereum-sepolia', other.secret);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('should let two identical racing requests reach the node once, in one process and across two', async () => {
    for (const [label, apps] of [
      ['same process', [t, t]],
      ['two processes', [t, second]],
    ] as const) {
      const calls = proxy.requests.length;
      const before = await account.usd();
      proxy.queue(delayed(300));
      const key = `race-${label.replace(' ', '-')}`;
      const responses = await Promise.all(apps.map((app) => send(key, rpcRequest('eth_blockNumber', [], 42), app)));
      expect(
        responses.map((r) => r.status),
        label,
      ).toEqual([200, 200]);
      const texts = await Promise.all(responses.map((r) => r.text()));
      expect(texts[0], label).toBe(texts[1]);
      expect(responses.map((r) => r.headers.get('idempotent-replayed')).sort(), label).toEqual(['true', null].sort());
      expect(proxy.requests.length - calls, label).toBe(1);
      // Either process may have reached the node: both write what they charged before the balance is read.
      await Promise.all(
        apps.map(async (app) => {
          await app.app.services.cryptoRpc.flush();
          await app.app.services.billing.flush(account.accountId);
        }),
      );
      expect(before.amount - (await account.usd()).amount, label).toBe(20n * 625n);
    }
  });

  it('should not store a failed request: a retry with the same key reaches the node', async () => {
    proxy.queue(answerStatus(503));
    const failed = await send('retry-after-failure', rpcRequest('eth_chainId'));
    expect(failed.status).toBe(502);
    const retried = await send('retry-after-failure', rpcRequest('eth_chainId'));
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('should not store a rejected request either (400 is answered before the key is claimed)', async () => {
    const rejected = await send('after-400', rpcRequest('eth_subscribe', ['newHeads']));
    expect(rejected.status).toBe(400);
    const accepted = await send('after-400', rpcRequest('eth_chainId'));
    expect(accepted.status).toBe(200);
  });
});
