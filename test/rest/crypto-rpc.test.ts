import { createPublicClient, http, keccak256, parseEther, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { rpcRequest, type JsonRpcResponse } from '../helpers/crypto-rpc.ts';
import { useRpcNodeApp, type RpcNodeApp } from '../helpers/crypto-rpc-node.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { answerRaw, answerStatus, delayed, funded, localChain, PING_TOPIC } from '../helpers/rpc-node.ts';

/** 6.25e-7 USD per credit = 625 nano-USD. */
const NANO_PER_CREDIT = 625n;

describe(`REST POST /api/v1/crypto/rpc/{network} against a real node (${testDatabaseKind})`, () => {
  const harness = useRpcNodeApp();
  const { call, json, nodeText } = harness;
  let node: RpcNodeApp['node'];
  let proxy: RpcNodeApp['proxy'];
  let flaky: RpcNodeApp['flaky'];
  let slow: RpcNodeApp['slow'];
  let t: RpcNodeApp['t'];
  let account: RpcNodeApp['account'];
  let contract: RpcNodeApp['contract'];
  let deployTx: RpcNodeApp['deployTx'];
  beforeAll(() => {
    ({ node, proxy, flaky, slow, t, account, contract, deployTx } = harness.state);
  });

  it('should list the configured networks, sorted, without a key', async () => {
    const response = await t.fetch('/api/v1/crypto/rpc/networks', { key: null });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      networks: [
        'arbitrum-sepolia',
        'base-sepolia',
        'ethereum-sepolia',
        'linea-sepolia',
        'optimism-sepolia',
        'polygon-amoy',
        'starknet-sepolia',
        'zksync-sepolia',
      ],
    });
  });

  it('should document both routes in the OpenAPI document', async () => {
    const doc = (await (await t.fetch('/api/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown; security?: unknown[] }>>;
    };
    expect(doc.paths['/api/v1/crypto/rpc/networks']?.get?.security).toEqual([]);
    expect(doc.paths['/api/v1/crypto/rpc/{network}']?.post?.requestBody).toBeDefined();
  });

  it('should pass a single answer through byte for byte with the billing headers, and charge exactly 20 credits once', async () => {
    const before = await account.usd();
    const usageBefore = (await account.usage()).length;
    const response = await call(rpcRequest('eth_blockNumber', [], 7));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(await nodeText(rpcRequest('eth_blockNumber', [], 7)));
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-service-rpc-credits')).toBe('20');
    expect(response.headers.get('x-service-rpc-cost-usd')).toBe('0.00001250');
    // No second set of cost headers unless the operator file names a prefix (rpc.costHeaderPrefix).
    expect(response.headers.get('x-venice-rpc-credits')).toBeNull();
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers.get('idempotent-replayed')).toBeNull();

    const after = await account.usd();
    expect(before.amount - after.amount).toBe(20n * NANO_PER_CREDIT);
    expect(after.reserved).toBe(0n);
    const usage = await account.usage();
    expect(usage).toHaveLength(usageBefore + 1);
    expect(usage.at(-1)).toMatchObject({
      sku: 'crypto-rpc-ethereum-sepolia',
      model_id: 'crypto-rpc-ethereum-sepolia',
      model_type: 'RPC',
      unit_type: 'credits',
      units: '20',
      amount: -12_500n,
      request_id: response.headers.get('x-request-id'),
    });
    expect(Number(usage.at(-1)?.price_per_unit_usd)).toBe(0.000000625);
  });

  it('should keep the node answer byte for byte, odd whitespace included', async () => {
    const odd = '{ "jsonrpc":"2.0",  "id":1,"result":"0x5"  }\n';
    proxy.queue(answerRaw(odd));
    const response = await call(rpcRequest('eth_blockNumber'));
    expect(await response.text()).toBe(odd);
  });

  it('should serve eth_chainId, eth_getBalance, eth_call and eth_estimateGas from the node', async () => {
    const results = await Promise.all([
      call(rpcRequest('eth_chainId')),
      call(rpcRequest('eth_getBalance', [funded.address, 'latest'])),
      call(rpcRequest('eth_call', [{ to: contract, data: '0x' }, 'latest'])),
      call(
        rpcRequest('eth_estimateGas', [
          { from: funded.address, to: '0x000000000000000000000000000000000000dEaD', value: '0x1' },
        ]),
      ),
    ]);
    const [chainId, balance, ethCall, estimate] = await Promise.all(results.map((r) => json(r)));
    expect(chainId?.result).toBe('0x539');
    expect(BigInt(balance?.result as string)).toBeGreaterThan(parseEther('900'));
    expect(ethCall?.result).toBe(`0x${'2a'.padStart(64, '0')}`);
    expect(BigInt(estimate?.result as string)).toBe(21_000n);
    for (const response of results) expect(response.headers.get('x-service-rpc-credits')).toBe('20');
  });

  it('should match the worked examples: Advanced 40 → 0.00002500, Large 80 → 0.00005000, zkSync 30, five errors → 25', async () => {
    const trace = await call(rpcRequest('debug_traceTransaction', [deployTx]));
    expect(trace.headers.get('x-service-rpc-credits')).toBe('40');
    expect(trace.headers.get('x-service-rpc-cost-usd')).toBe('0.00002500');
    expect((await json<{ result: { structLogs: unknown[] } }>(trace)).result.structLogs.length).toBeGreaterThan(0);

    const large = await call(rpcRequest('txpool_content'));
    expect((await json(large)).error).toBeUndefined();
    expect(large.headers.get('x-service-rpc-credits')).toBe('80');
    expect(large.headers.get('x-service-rpc-cost-usd')).toBe('0.00005000');

    const zk = await call(rpcRequest('eth_blockNumber'), 'zksync-sepolia');
    expect(zk.headers.get('x-service-rpc-credits')).toBe('30');
    expect(zk.headers.get('x-service-rpc-cost-usd')).toBe('0.00001875');

    const before = await account.usd();
    const errors = await call(
      [1, 2, 3, 4, 5].map((id) => rpcRequest('eth_getBalance', ['not-an-address', 'latest'], id)),
    );
    const body = await json<JsonRpcResponse[]>(errors);
    expect(body.every((item) => item.error !== undefined)).toBe(true);
    expect(errors.headers.get('x-service-rpc-credits')).toBe('25');
    expect(errors.headers.get('x-service-rpc-cost-usd')).toBe('0.00001563'); // 0.000015625 at 8 places
    expect(before.amount - (await account.usd()).amount).toBe(25n * NANO_PER_CREDIT);
  });

  it('should answer a batch mixing tiers and errors in request order with its ids, billed once as one usage entry', async () => {
    const usageBefore = (await account.usage()).length;
    const before = await account.usd();
    const batch = [
      rpcRequest('eth_blockNumber', [], 'a'),
      rpcRequest('debug_traceTransaction', [deployTx], 2),
      rpcRequest('eth_getBalance', ['0xnot-hex'], 3),
      rpcRequest('debug_traceTransaction', [`0x${'00'.repeat(32)}`], 'four'),
      rpcRequest('eth_chainId', [], null as unknown as number),
    ];
    const response = await call(batch);
    const text = await response.text();
    expect(text).toBe(await nodeText(batch)); // byte for byte: the node kept the order
    const body = JSON.parse(text) as JsonRpcResponse[];
    expect(body.map((item) => item.id)).toEqual(['a', 2, 3, 'four', null]);
    expect(body.map((item) => item.error !== undefined)).toEqual([false, false, true, true, false]);
    const credits = 20 + 40 + 5 + 5 + 20;
    expect(response.headers.get('x-service-rpc-credits')).toBe(String(credits));
    expect(before.amount - (await account.usd()).amount).toBe(BigInt(credits) * NANO_PER_CREDIT);
    const usage = await account.usage();
    expect(usage).toHaveLength(usageBefore + 1);
    expect(usage.at(-1)).toMatchObject({
      units: String(credits),
      notes: 'JSON-RPC on ethereum-sepolia: 5 calls, 2 answered with an error',
    });
  });

  it('should put a reordered batch back in request order and bill an item the node left out as an error', async () => {
    proxy.queue(
      answerRaw(
        '[{"jsonrpc":"2.0","id":2,"result":"0x2"},{"jsonrpc":"2.0","id":9,"result":"0x9"},{"jsonrpc":"2.0","id":1,"result":"0x1"}]',
      ),
    );
    const response = await call([
      rpcRequest('eth_blockNumber', [], 1),
      rpcRequest('eth_blockNumber', [], 2),
      rpcRequest('eth_chainId', [], 3),
    ]);
    const body = await json<JsonRpcResponse[]>(response);
    expect(body.map((item) => item.id)).toEqual([1, 2, 3]);
    expect(body.slice(0, 2).map((item) => item.result)).toEqual(['0x1', '0x2']);
    expect(body[2]?.error?.code).toBe(-32603);
    expect(response.headers.get('x-service-rpc-credits')).toBe('45');
  });

  it('should send a transaction signed with viem through eth_sendRawTransaction, log its hash (not the payload), and fetch its receipt', async () => {
    const reader = createPublicClient({ chain: localChain, transport: http(node.url) });
    const nonce = await reader.getTransactionCount({ address: funded.address });
    const signed = await funded.signTransaction({
      chainId: localChain.id,
      type: 'eip1559',
      nonce,
      to: contract,
      data: '0x01',
      gas: 100_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const response = await call(rpcRequest('eth_sendRawTransaction', [signed]));
    expect(response.headers.get('x-service-rpc-credits')).toBe('20');
    const hash = (await json(response)).result as Hex;
    expect(hash).toBe(keccak256(signed));

    const receipt = await json<{ result: { status: string; logs: { topics: string[] }[] } }>(
      await call(rpcRequest('eth_getTransactionReceipt', [hash])),
    );
    expect(receipt.result.status).toBe('0x1');
    expect(receipt.result.logs[0]?.topics[0]).toBe(PING_TOPIC);

    const logs = await json<{ result: { transactionHash: string }[] }>(
      await call(
        rpcRequest('eth_getLogs', [{ address: contract, fromBlock: '0x0', toBlock: 'latest', topics: [PING_TOPIC] }]),
      ),
    );
    expect(logs.result.map((log) => log.transactionHash)).toContain(hash);

    await t.app.services.cryptoRpc.flush();
    const rows = await t.app.database.db
      .selectFrom('rpc_raw_transactions')
      .selectAll()
      .where('tx_hash', '=', hash)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      account_id: account.accountId,
      network: 'ethereum-sepolia',
      request_id: response.headers.get('x-request-id'),
      outcome: 'accepted',
    });
    const line = t.logs.find((entry) => entry.msg === 'eth_sendRawTransaction' && entry.txHash === hash);
    expect(line).toMatchObject({
      network: 'ethereum-sepolia',
      accountId: account.accountId,
      reqId: response.headers.get('x-request-id'),
      outcome: 'accepted',
    });
    expect(JSON.stringify(t.logs)).not.toContain(signed.slice(2, 66));
    expect(JSON.stringify(rows)).not.toContain(signed.slice(2, 66));
  });

  it('should log a raw transaction the node rejects as rejected, billed 5 credits', async () => {
    const broke = privateKeyToAccount(generatePrivateKey());
    const signed = await broke.signTransaction({
      chainId: localChain.id,
      type: 'eip1559',
      nonce: 0,
      to: contract,
      value: parseEther('1'),
      gas: 100_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const response = await call(rpcRequest('eth_sendRawTransaction', [signed]));
    expect((await json(response)).error?.message).toMatch(/insufficient funds/);
    expect(response.headers.get('x-service-rpc-credits')).toBe('5');
    await t.app.services.cryptoRpc.flush();
    const row = await t.app.database.db
      .selectFrom('rpc_raw_transactions')
      .select('outcome')
      .where('tx_hash', '=', keccak256(signed))
      .executeTakeFirst();
    expect(row?.outcome).toBe('rejected');
  });

  describe('upstream failover', () => {
    it('should pass a JSON-RPC error through from the first node without trying the next one', async () => {
      const [flakyCalls, proxyCalls] = [flaky.requests.length, proxy.requests.length];
      const response = await call(rpcRequest('eth_getBalance', ['bad']), 'optimism-sepolia');
      expect(response.status).toBe(200);
      expect((await json(response)).error).toBeDefined();
      expect(response.headers.get('x-service-rpc-credits')).toBe('5');
      expect([flaky.requests.length - flakyCalls, proxy.requests.length - proxyCalls]).toEqual([1, 0]);
    });

    it('should move on to the next node after an HTTP 503, then try the failed node last during its cooldown', async () => {
      flaky.queue(answerStatus(503));
      const [flakyCalls, proxyCalls] = [flaky.requests.length, proxy.requests.length];
      const first = await call(rpcRequest('eth_chainId'), 'base-sepolia');
      expect(first.status).toBe(200);
      expect((await json(first)).result).toBe('0x539');
      expect([flaky.requests.length - flakyCalls, proxy.requests.length - proxyCalls]).toEqual([1, 1]);
      const second = await call(rpcRequest('eth_chainId'), 'base-sepolia');
      expect(second.status).toBe(200);
      expect([flaky.requests.length - flakyCalls, proxy.requests.length - proxyCalls]).toEqual([1, 2]);
      expect(
        t.logs.some(
          (entry) =>
            entry.msg === 'rpc upstream failed' &&
            entry.upstream === 'flaky-node' &&
            entry.reason === 'the node answered HTTP 503',
        ),
      ).toBe(true);
    });

    it('should treat an answer that is not JSON-RPC as a failure of that node', async () => {
      flaky.queue(answerRaw('<html>bad gateway</html>'));
      const proxyCalls = proxy.requests.length;
      const response = await call(rpcRequest('eth_chainId'), 'optimism-sepolia');
      expect((await json(response)).result).toBe('0x539');
      expect(proxy.requests.length - proxyCalls).toBe(1);
    });

    it('should fail over from a dead first node (connection refused, env shortcut)', async () => {
      const response = await call(rpcRequest('eth_chainId'), 'arbitrum-sepolia');
      expect(response.status).toBe(200);
      expect((await json(response)).result).toBe('0x539');
    });

    it('should answer 502 when every node is down and 504 when they time out, charging nothing', async () => {
      const before = await account.usd();
      const down = await call(rpcRequest('eth_chainId'), 'linea-sepolia');
      expect(down.status).toBe(502);
      expect(await down.json()).toMatchObject({
        code: 'UPSTREAM_ERROR',
        error: expect.stringContaining('linea-sepolia'),
      });
      slow.queue(delayed(3_000));
      const late = await call(rpcRequest('eth_chainId'), 'polygon-amoy');
      expect(late.status).toBe(504);
      expect(await late.json()).toMatchObject({ code: 'REQUEST_TIMEOUT' });
      const after = await account.usd();
      expect(after).toEqual(before);
    });
  });
});
