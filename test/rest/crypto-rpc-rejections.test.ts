import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcRequest } from '../helpers/crypto-rpc.ts';
import { useRpcNodeApp, type RpcNodeApp } from '../helpers/crypto-rpc-node.ts';
import { testDatabaseKind } from '../helpers/db.ts';

describe(`REST POST /api/v1/crypto/rpc/{network} against a real node: rejections (${testDatabaseKind})`, () => {
  const harness = useRpcNodeApp();
  const { call } = harness;
  let proxy: RpcNodeApp['proxy'];
  let t: RpcNodeApp['t'];
  let account: RpcNodeApp['account'];
  beforeAll(() => {
    ({ proxy, t, account } = harness.state);
  });

  describe('rejections (400 and friends): nothing forwarded, nothing charged', () => {
    const expectRejected = async (response: Response, status: number, code: string) => {
      expect(response.status).toBe(status);
      const body = (await response.json()) as {
        error: string;
        code: string;
        issues?: { path: unknown[]; message: string }[];
      };
      expect(body.code).toBe(code);
      return body;
    };
    let proxyCalls: number;
    let before: { amount: bigint };

    beforeAll(async () => {
      proxyCalls = proxy.requests.length;
      before = await account.usd();
    });
    afterAll(async () => {
      expect(proxy.requests.length).toBe(proxyCalls);
      expect((await account.usd()).amount).toBe(before.amount);
    });

    it('should reject a batch naming every unsupported method and why', async () => {
      const body = await expectRejected(
        await call([
          rpcRequest('eth_blockNumber', [], 1),
          rpcRequest('eth_subscribe', ['newHeads'], 2),
          rpcRequest('eth_newFilter', [{}], 3),
          rpcRequest('eth_sign', [], 4),
          rpcRequest('admin_peers', [], 5),
          rpcRequest('eth_getFilterChanges', ['0x1'], 6),
        ]),
        400,
        'INVALID_REQUEST',
      );
      for (const method of ['eth_subscribe', 'eth_newFilter', 'eth_sign', 'admin_peers', 'eth_getFilterChanges'])
        expect(body.error).toContain(method);
      expect(body.error).not.toContain('eth_blockNumber (');
      expect(body.error).toContain('use eth_getLogs');
      expect(body.error).toContain('HTTP-only');
      expect(body.error).toContain('eth_sendRawTransaction');
      expect(body.issues?.map((issue) => issue.path)).toEqual([
        [1, 'method'],
        [2, 'method'],
        [3, 'method'],
        [4, 'method'],
        [5, 'method'],
      ]);
    });

    it.each([
      ['eth_unsubscribe', 'HTTP-only'],
      ['eth_uninstallFilter', 'eth_getLogs'],
      ['eth_accounts', 'hold no keys'],
      ['eth_mining', 'do not mine'],
      ['eth_submitWork', 'do not mine'],
      ['personal_sign', 'hold no keys'],
      ['debug_setHead', 'not allowlisted'],
      ['arbtrace_block', 'arbitrum networks only'],
    ])('should reject %s (%s)', async (method, reason) => {
      const body = await expectRejected(await call(rpcRequest(method)), 400, 'INVALID_REQUEST');
      expect(body.error).toContain(method);
      expect(body.error).toContain(reason);
    });

    it('should reject EVM methods on a Starknet network', async () => {
      const body = await expectRejected(
        await call(rpcRequest('eth_blockNumber'), 'starknet-sepolia'),
        400,
        'INVALID_REQUEST',
      );
      expect(body.error).toContain('starknet_');
    });

    it.each([
      [
        'an unknown network',
        'solana-mainnet',
        rpcRequest('eth_blockNumber'),
        /Unknown network "solana-mainnet".*ethereum-sepolia/,
      ],
      ['invalid JSON', 'ethereum-sepolia', '{"jsonrpc": "2.0", ', /not valid JSON/],
      ['an empty body', 'ethereum-sepolia', '', /empty/],
      ['a number', 'ethereum-sepolia', 42, /request object or a batch/],
      ['an empty batch', 'ethereum-sepolia', [], /1 to 100/],
      [
        '101 items',
        'ethereum-sepolia',
        Array.from({ length: 101 }, (_, i) => rpcRequest('eth_blockNumber', [], i)),
        /1 to 100 requests; got 101/,
      ],
      ['a missing jsonrpc', 'ethereum-sepolia', { id: 1, method: 'eth_blockNumber' }, /jsonrpc/],
      ['a missing id', 'ethereum-sepolia', { jsonrpc: '2.0', method: 'eth_blockNumber' }, /id: Required/],
      [
        'duplicate ids',
        'ethereum-sepolia',
        [rpcRequest('eth_blockNumber'), rpcRequest('eth_chainId')],
        /\[1\]\.id: Duplicate id 1/,
      ],
      [
        'string params',
        'ethereum-sepolia',
        { ...rpcRequest('eth_blockNumber'), params: 'x' },
        /params: Must be an array or an object/,
      ],
      ['a missing method', 'ethereum-sepolia', { jsonrpc: '2.0', id: 1 }, /method: Required/],
      [
        'a raw transaction that is not hex',
        'ethereum-sepolia',
        rpcRequest('eth_sendRawTransaction', ['hello']),
        /0x-prefixed hex/,
      ],
    ])('should answer 400 for %s', async (_label, network, body, message) => {
      const error = await expectRejected(await call(body, network), 400, 'INVALID_REQUEST');
      expect(error.error).toMatch(message);
    });

    it.each([['has space'], ['x'.repeat(256)], ['é']])('should answer 400 for the Idempotency-Key %j', async (key) => {
      const error = await expectRejected(
        await call(rpcRequest('eth_blockNumber'), 'ethereum-sepolia', { 'idempotency-key': key }),
        400,
        'INVALID_REQUEST',
      );
      expect(error.error).toContain('Idempotency-Key');
    });

    it('should answer 415 for a non-JSON Content-Type, 402 (x402 discovery) without credentials, 401 for a bad key', async () => {
      await expectRejected(
        await call(rpcRequest('eth_blockNumber'), 'ethereum-sepolia', { 'content-type': 'text/html' }),
        415,
        'INVALID_CONTENT_TYPE',
      );
      const anonymous = await call(rpcRequest('eth_blockNumber'), 'ethereum-sepolia', {}, null);
      expect(anonymous.status).toBe(402);
      expect(await anonymous.json()).toMatchObject({ x402Version: 2 });
      await expectRejected(
        await call(rpcRequest('eth_blockNumber'), 'ethereum-sepolia', {}, 'lagoon_not-a-key'),
        401,
        'AUTHENTICATION_FAILED',
      );
    });

    it('should answer 402 for an account without funds', async () => {
      const broke = await t.account('0');
      await expectRejected(
        await call(rpcRequest('eth_blockNumber'), 'ethereum-sepolia', {}, broke.secret),
        402,
        'INSUFFICIENT_BALANCE',
      );
    });
  });
});
