import { createPublicClient, createWalletClient, http, type Hex } from 'viem';
import { afterAll, beforeAll } from 'vitest';
import { startRpcTestApp, type JsonRpcResponse, type RpcTestAccount, type RpcTestApp } from './crypto-rpc.ts';
import {
  deadUrl,
  funded,
  localChain,
  pingContractBytecode,
  startChainNode,
  startCountingProxy,
  type ChainNode,
  type CountingProxy,
} from './rpc-node.ts';

export interface RpcNodeApp {
  node: ChainNode;
  /** Counting proxies in front of the node: the plain upstream, a `flaky-node` provider and a 300 ms `slow-node`. */
  proxy: CountingProxy;
  flaky: CountingProxy;
  slow: CountingProxy;
  t: RpcTestApp;
  account: RpcTestAccount;
  /** A contract deployed on the node for eth_call / eth_getLogs, and its deployment transaction. */
  contract: Hex;
  deployTx: Hex;
}

/**
 * For a test file of the crypto RPC route against a real local chain (test/rest/crypto-rpc*.test.ts): the node,
 * proxies, networks (plain, failover, dead, slow), an app and an account funded with 1 USD, made once for the file.
 */
export function useRpcNodeApp() {
  const state = {} as RpcNodeApp;
  beforeAll(async () => {
    state.node = await startChainNode();
    const { node } = state;
    [state.proxy, state.flaky, state.slow] = await Promise.all([
      startCountingProxy(node.url),
      startCountingProxy(node.url),
      startCountingProxy(node.url),
    ]);
    const { proxy, flaky, slow } = state;
    const dead = await deadUrl();
    state.t = await startRpcTestApp(
      [
        'providers:',
        `  - { id: flaky-node, type: json-rpc, baseUrl: "${flaky.url}", timeoutMs: 2000 }`,
        `  - { id: slow-node, type: json-rpc, baseUrl: "${slow.url}", timeoutMs: 300 }`,
        'rpc:',
        '  networks:',
        `    ethereum-sepolia: { upstreams: ["${proxy.url}"] }`,
        `    zksync-sepolia: { upstreams: ["${proxy.url}"] }`,
        `    starknet-sepolia: { upstreams: ["${proxy.url}"] }`,
        `    base-sepolia: { upstreams: [flaky-node, "${proxy.url}"], cooldownMs: 60000 }`,
        `    optimism-sepolia: { upstreams: [flaky-node, "${proxy.url}"] }`,
        `    linea-sepolia: { upstreams: ["${dead}"] }`,
        `    polygon-amoy: { upstreams: [slow-node] }`,
      ].join('\n'),
      { RPC_UPSTREAM_ARBITRUM_SEPOLIA: `${dead},${proxy.url}` },
    );
    state.account = await state.t.account('1');
    // A contract on the chain for eth_call / eth_getLogs (set up directly on the node, not through Lagoon).
    const direct = createWalletClient({ chain: localChain, transport: http(node.url), account: funded });
    const reader = createPublicClient({ chain: localChain, transport: http(node.url) });
    state.deployTx = await direct.deployContract({ abi: [], bytecode: pingContractBytecode() });
    state.contract = (await reader.waitForTransactionReceipt({ hash: state.deployTx })).contractAddress!;
  });

  afterAll(async () => {
    await state.t?.close();
    await Promise.all([state.proxy?.close(), state.flaky?.close(), state.slow?.close()]);
    await state.node?.close();
  });

  const call = (
    body: unknown,
    network = 'ethereum-sepolia',
    headers: Record<string, string> = {},
    key: string | null = state.account.secret,
  ) => state.t.rpc(network, body, { key, headers });
  const json = async <T = JsonRpcResponse>(response: Response) => JSON.parse(await response.text()) as T;
  const nodeText = async (body: unknown) =>
    (
      await fetch(state.node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).text();
  return { state, call, json, nodeText };
}
