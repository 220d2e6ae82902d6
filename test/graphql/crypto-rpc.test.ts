import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRpcTestApp, rpcRequest, type RpcTestAccount, type RpcTestApp } from '../helpers/crypto-rpc.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { startChainNode, startCountingProxy, type ChainNode, type CountingProxy } from '../helpers/rpc-node.ts';

interface GraphQLBody<T> {
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
}

const RPC_CALL = `
  mutation Call($network: String!, $request: JSON!, $key: String) {
    rpcCall(network: $network, request: $request, idempotencyKey: $key) {
      __typename
      ... on MutationRpcCallSuccess { data { response credits costUsd costUsdHeader replayed requestId } }
      ... on RpcCapExceededError { message code cap limit remaining customMessage resetAt }
      ... on ValidationError { message code issues { path message } }
      ... on Error { message code }
    }
  }`;

interface RpcCallData {
  rpcCall: {
    __typename: string;
    data?: {
      response: unknown;
      credits: number;
      costUsd: string;
      costUsdHeader: string;
      replayed: boolean;
      requestId: string;
    };
    message?: string;
    code?: string;
    cap?: string;
    limit?: number;
    remaining?: number;
    customMessage?: string;
    issues?: { path: string[]; message: string }[];
  };
}

describe(`GraphQL rpcNetworks / rpcCall (${testDatabaseKind})`, () => {
  let node: ChainNode;
  let proxy: CountingProxy;
  let t: RpcTestApp;
  let account: RpcTestAccount;

  beforeAll(async () => {
    node = await startChainNode();
    proxy = await startCountingProxy(node.url);
    t = await startRpcTestApp(
      [
        'rpc:',
        '  caps: { standard: { requestsPerMinute: 5 } }',
        '  networks:',
        `    ethereum-sepolia: { upstreams: ["${proxy.url}"] }`,
        `    zksync-mainnet: { upstreams: ["${proxy.url}"] }`,
      ].join('\n'),
    );
    account = await t.account('1');
  });

  afterAll(async () => {
    await t.close();
    await proxy.close();
    await node.close();
  });

  const graphql = async <T>(
    query: string,
    variables: Record<string, unknown> = {},
    key: string | null = account.secret,
  ) => {
    const response = await t.fetch('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as GraphQLBody<T>;
  };

  it('should list the networks publicly', async () => {
    const result = await graphql('{ rpcNetworks { slug family baseCredits } }', {}, null);
    expect(result).toEqual({
      data: {
        rpcNetworks: [
          { slug: 'ethereum-sepolia', family: 'ethereum', baseCredits: 20 },
          { slug: 'zksync-mainnet', family: 'zksync', baseCredits: 30 },
        ],
      },
    });
  });

  it('should call the node and report credits and cost, charging the account once', async () => {
    const before = await account.usd();
    const result = await graphql<RpcCallData>(RPC_CALL, {
      network: 'ethereum-sepolia',
      request: rpcRequest('eth_chainId', [], 'gql'),
    });
    expect(result.errors).toBeUndefined();
    expect(result.data?.rpcCall).toMatchObject({
      __typename: 'MutationRpcCallSuccess',
      data: {
        response: { jsonrpc: '2.0', id: 'gql', result: '0x539' },
        credits: 20,
        costUsd: '0.0000125',
        costUsdHeader: '0.00001250',
        replayed: false,
      },
    });
    expect(result.data?.rpcCall.data?.requestId).toMatch(/^[0-9a-f]{32}$/);
    expect(before.amount - (await account.usd()).amount).toBe(12_500n);
  });

  it('should answer a batch and replay it by idempotency key without reaching the node', async () => {
    const request = [rpcRequest('eth_blockNumber', [], 1), rpcRequest('eth_getBalance', ['bad'], 2)];
    const first = await graphql<RpcCallData>(RPC_CALL, { network: 'zksync-mainnet', request, key: 'gql-batch' });
    expect(first.data?.rpcCall.data).toMatchObject({
      credits: 35,
      costUsd: '0.000021875',
      costUsdHeader: '0.00002188',
      replayed: false,
    });
    const response = first.data?.rpcCall.data?.response as { id: number; error?: unknown }[];
    expect(response.map((item) => [item.id, item.error !== undefined])).toEqual([
      [1, false],
      [2, true],
    ]);
    const calls = proxy.requests.length;
    const replay = await graphql<RpcCallData>(RPC_CALL, { network: 'zksync-mainnet', request, key: 'gql-batch' });
    expect(replay.data?.rpcCall.data).toMatchObject({ credits: 35, replayed: true, response });
    expect(proxy.requests.length).toBe(calls);
  });

  it('should cancel the node call when the client goes away, and charge nothing', async () => {
    const caller = await t.account('1');
    let reached!: () => void;
    let closed!: () => void;
    const atNode = new Promise<void>((resolve) => (reached = resolve));
    const nodeCallClosed = new Promise<'cancelled'>((resolve) => (closed = () => resolve('cancelled')));
    // The node never answers: only the caller's abort can end the call before the node's 30 s timeout.
    proxy.queue((_request, response) => {
      reached();
      response.once('close', closed);
    });
    const client = new AbortController();
    const call = t
      .fetch('/graphql', {
        method: 'POST',
        key: caller.secret,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: RPC_CALL,
          variables: { network: 'ethereum-sepolia', request: rpcRequest('eth_chainId') },
        }),
        signal: client.signal,
      })
      .catch(() => undefined);
    await atNode;
    client.abort();
    await call;
    const stillOpen = new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), 10_000).unref());
    expect(await Promise.race([nodeCallClosed, stillOpen])).toBe('cancelled');
    await eventually(async () => expect(await caller.usd()).toEqual({ amount: 1_000_000_000n, reserved: 0n }));
  });

  it('should return typed errors: unsupported methods, unknown network, caps; and require a key', async () => {
    const unsupported = await graphql<RpcCallData>(RPC_CALL, {
      network: 'ethereum-sepolia',
      request: [rpcRequest('eth_subscribe', ['newHeads'], 1), rpcRequest('eth_newFilter', [{}], 2)],
    });
    expect(unsupported.data?.rpcCall).toMatchObject({
      __typename: 'ValidationError',
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/eth_subscribe.*eth_newFilter/),
    });
    const unknown = await graphql<RpcCallData>(RPC_CALL, {
      network: 'nope-mainnet',
      request: rpcRequest('eth_chainId'),
    });
    expect(unknown.data?.rpcCall).toMatchObject({
      __typename: 'ValidationError',
      message: expect.stringContaining('Unknown network'),
    });
    const anonymous = await graphql<RpcCallData>(
      RPC_CALL,
      { network: 'ethereum-sepolia', request: rpcRequest('eth_chainId') },
      null,
    );
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');

    const capped = await t.account('1');
    let last: GraphQLBody<RpcCallData> | undefined;
    for (let i = 0; i < 6; i += 1)
      last = await graphql<RpcCallData>(
        RPC_CALL,
        { network: 'ethereum-sepolia', request: rpcRequest('eth_chainId') },
        capped.secret,
      );
    expect(last?.data?.rpcCall).toMatchObject({
      __typename: 'RpcCapExceededError',
      code: 'RATE_LIMIT_EXCEEDED',
      cap: 'requests-per-minute',
      limit: 5,
      remaining: 0,
      customMessage: expect.stringContaining('5 crypto RPC requests per minute'),
    });
  });
});
