import { createPublicClient, createWalletClient, http, parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/db.ts';
import { funded, localChain, startChainNode, type ChainNode } from '../helpers/rpc-node.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';

const ADMIN = 'e2e-rpc-admin-key';

/** As a new user would: `npm start` with RPC_UPSTREAM_ETHEREUM_SEPOLIA, the operator CLI, and viem pointed at Lagoon. */
describe(`crypto RPC proxy end to end: server process, operator CLI and viem (${testDatabaseKind})`, () => {
  let node: ChainNode;
  let server: ServerProcess;
  let env: Record<string, string>;
  let removeStorage: () => Promise<void>;

  beforeAll(async () => {
    node = await startChainNode();
    const storage = await serverStorage('lagoon-rpc-e2e-');
    removeStorage = storage.remove;
    env = { ...storage.env, LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN, RPC_UPSTREAM_ETHEREUM_SEPOLIA: node.url };
    server = await startServer(env);
    const credit = await runCliProcess(
      ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', '1'],
      env,
    );
    expect(credit.code, credit.stderr).toBe(0);
  });

  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop();
    await node.close();
    await removeStorage();
  });

  const lagoonUrl = () => `${server.url}/api/v1/crypto/rpc/ethereum-sepolia`;
  const transport = (options: { batch?: boolean } = {}) =>
    http(lagoonUrl(), { fetchOptions: { headers: { Authorization: `Bearer ${ADMIN}` } }, ...options });
  const usdBalance = async () => {
    const response = await fetch(`${server.url}/api/v1/billing/balance`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    return ((await response.json()) as { balances: { usd: number } }).balances.usd;
  };

  it('should list the network of the env shortcut', async () => {
    expect(await (await fetch(`${server.url}/api/v1/crypto/rpc/networks`)).json()).toEqual({
      networks: ['ethereum-sepolia'],
    });
  });

  it("should let viem's public client read the chain through Lagoon, single calls and a JSON-RPC batch", async () => {
    const client = createPublicClient({ chain: localChain, transport: transport() });
    expect(await client.getChainId()).toBe(localChain.id);
    expect(await client.getBalance({ address: funded.address })).toBeGreaterThan(parseEther('100'));
    const batched = createPublicClient({ chain: localChain, transport: transport({ batch: true }) });
    const [block, chainId, balance] = await Promise.all([
      batched.getBlockNumber(),
      batched.getChainId(),
      batched.getBalance({ address: funded.address }),
    ]);
    expect(block).toBeGreaterThanOrEqual(0n);
    expect(chainId).toBe(localChain.id);
    expect(balance).toBeGreaterThan(0n);
  });

  it('should mine a transaction signed locally by viem and sent through Lagoon, charging the account', async () => {
    const before = await usdBalance();
    const wallet = createWalletClient({ chain: localChain, transport: transport(), account: funded });
    const client = createPublicClient({ chain: localChain, transport: transport(), pollingInterval: 100 });
    const to = '0x000000000000000000000000000000000000dEaD';
    const hash = await wallet.sendTransaction({ to, value: 12_345n });
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 10_000 });
    expect(receipt.status).toBe('success');
    expect(await client.getBalance({ address: to })).toBe(12_345n);
    const after = await usdBalance();
    expect(after).toBeLessThan(before);
  });

  it('should answer with the billing headers over HTTP and refuse a subscription', async () => {
    const response = await fetch(lagoonUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-service-rpc-credits')).toBe('20');
    expect(response.headers.get('x-service-rpc-cost-usd')).toBe('0.00001250');
    const refused = await fetch(lagoonUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}',
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toContain('HTTP-only');
  });

  it('should let the operator set the staff tier with the CLI while the server runs', async () => {
    const result = await runCliProcess(['rpc-tier', '--key', ADMIN, '--tier', 'staff', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    // stdout may carry a log line after the JSON (REDIS_URL: the event bus closing), so look for the field.
    expect(result.stdout).toContain('"rpcTier": "staff"');
  });
});
