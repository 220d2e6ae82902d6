import { protocolOf, type ChainFamily } from './chains.ts';

/** Method tiers and their credit multipliers (docs/api.md, Methods and credits). */
export const TIER_MULTIPLIER = { standard: 1, advanced: 2, large: 4 } as const;
export type MethodTier = keyof typeof TIER_MULTIPLIER;

export type MethodVerdict =
  { readonly allowed: true; readonly tier: MethodTier } | { readonly allowed: false; readonly reason: string };

/** Standard tier on every Ethereum-API network: reads, raw transaction submission, ERC-4337 bundler calls. */
const EVM_STANDARD = new Set([
  'eth_blobBaseFee',
  'eth_blockNumber',
  'eth_call',
  'eth_chainId',
  'eth_createAccessList',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getCode',
  'eth_getLogs',
  'eth_getProof',
  'eth_getStorageAt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_maxPriorityFeePerGas',
  'eth_protocolVersion',
  'eth_sendRawTransaction',
  'eth_simulateV1',
  'eth_syncing',
  'net_listening',
  'net_peerCount',
  'net_version',
  'web3_clientVersion',
  'web3_sha3',
  // ERC-4337 bundler methods
  'eth_estimateUserOperationGas',
  'eth_getUserOperationByHash',
  'eth_getUserOperationReceipt',
  'eth_sendUserOperation',
  'eth_supportedEntryPoints',
]);

const EVM_ADVANCED = new Set([
  'debug_traceBlockByHash',
  'debug_traceBlockByNumber',
  'debug_traceCall',
  'debug_traceTransaction',
  'trace_block',
  'trace_call',
  'trace_get',
  'trace_transaction',
  'txpool_inspect',
  'txpool_status',
]);

const EVM_LARGE = new Set(['trace_replayBlockTransactions', 'trace_replayTransaction', 'txpool_content']);

/**
 * Chain-family extension namespaces: Standard unless listed under `advanced`/`large`. Arbitrum's `arbtrace_` is
 * the chain-specific trace namespace (Advanced, its replay methods Large); Starknet's whole API is `starknet_`.
 */
const EXTENSIONS: Partial<
  Record<
    ChainFamily,
    { namespace: string; advanced?: ReadonlySet<string>; large?: ReadonlySet<string>; advancedByDefault?: boolean }
  >
> = {
  polygon: { namespace: 'bor' },
  arbitrum: {
    namespace: 'arbtrace',
    advancedByDefault: true,
    large: new Set(['arbtrace_replayBlockTransactions', 'arbtrace_replayTransaction']),
  },
  optimism: { namespace: 'optimism' },
  base: { namespace: 'optimism' },
  linea: { namespace: 'linea' },
  zksync: { namespace: 'zks' },
  starknet: {
    namespace: 'starknet',
    advanced: new Set(['starknet_traceTransaction', 'starknet_simulateTransactions']),
    large: new Set(['starknet_traceBlockTransactions']),
  },
};

const SUBSCRIPTION_REASON =
  'this proxy is HTTP-only and subscriptions need a WebSocket; poll eth_blockNumber or eth_getLogs instead';
const FILTER_REASON =
  'stateful filters live on one node and requests may reach another; use eth_getLogs with a block range instead';
const KEY_REASON =
  'the nodes behind this proxy hold no keys and do not mine; sign locally and send with eth_sendRawTransaction';

const REJECTED: ReadonlyMap<string, string> = new Map([
  ['eth_subscribe', SUBSCRIPTION_REASON],
  ['eth_unsubscribe', SUBSCRIPTION_REASON],
  ['eth_newFilter', FILTER_REASON],
  ['eth_newBlockFilter', FILTER_REASON],
  ['eth_newPendingTransactionFilter', FILTER_REASON],
  ['eth_getFilterChanges', FILTER_REASON],
  ['eth_getFilterLogs', FILTER_REASON],
  ['eth_uninstallFilter', FILTER_REASON],
  ...[
    'eth_sign',
    'eth_signTransaction',
    'eth_sendTransaction',
    'eth_signTypedData',
    'eth_signTypedData_v3',
    'eth_signTypedData_v4',
    'eth_accounts',
    'eth_coinbase',
  ].map((m) => [m, KEY_REASON] as const),
  ...['eth_mining', 'eth_hashrate', 'eth_getWork', 'eth_submitWork', 'eth_submitHashrate'].map(
    (m) => [m, KEY_REASON] as const,
  ),
]);

const METHOD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;

/** Whether `method` may be forwarded on a network of `family`, and at which tier; otherwise why not. */
export function classifyMethod(family: ChainFamily, method: string): MethodVerdict {
  if (!METHOD_NAME.test(method)) return { allowed: false, reason: 'not a method name' };
  const underscore = method.indexOf('_');
  const namespace = underscore > 0 ? method.slice(0, underscore) : '';
  const extension = EXTENSIONS[family];
  if (extension && namespace === extension.namespace) {
    if (/^starknet_(subscribe|unsubscribe)/.test(method))
      return {
        allowed: false,
        reason: SUBSCRIPTION_REASON.replace(
          'eth_blockNumber or eth_getLogs',
          'starknet_blockNumber or starknet_getEvents',
        ),
      };
    if (extension.large?.has(method)) return { allowed: true, tier: 'large' };
    if (extension.advancedByDefault || extension.advanced?.has(method)) return { allowed: true, tier: 'advanced' };
    return { allowed: true, tier: 'standard' };
  }
  if (protocolOf(family) === 'starknet')
    return { allowed: false, reason: 'Starknet networks serve the Starknet JSON-RPC API (starknet_* methods)' };
  const rejected = REJECTED.get(method);
  if (rejected) return { allowed: false, reason: rejected };
  if (namespace === 'personal') return { allowed: false, reason: KEY_REASON };
  if (EVM_STANDARD.has(method)) return { allowed: true, tier: 'standard' };
  if (EVM_ADVANCED.has(method)) return { allowed: true, tier: 'advanced' };
  if (EVM_LARGE.has(method)) return { allowed: true, tier: 'large' };
  const owner = Object.entries(EXTENSIONS).find(([, ext]) => ext.namespace === namespace)?.[0];
  if (owner) return { allowed: false, reason: `the ${namespace}_ namespace is served on ${owner} networks only` };
  return { allowed: false, reason: 'not allowlisted' };
}
