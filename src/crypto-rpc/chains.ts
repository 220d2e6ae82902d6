/**
 * Chain families of the crypto RPC proxy (docs/configuration.md): a network slug is `<family>-mainnet` or
 * `<family>-<testnet>`. The family decides which extension namespaces are allowlisted and the base credits.
 */
export const CHAIN_FAMILIES = [
  'ethereum',
  'polygon',
  'arbitrum',
  'optimism',
  'base',
  'linea',
  'avalanche',
  'bsc',
  'blast',
  'zksync',
  'starknet',
] as const;
export type ChainFamily = (typeof CHAIN_FAMILIES)[number];

/** How a family speaks JSON-RPC: the Ethereum API (plus extensions), or Starknet's own API. */
export type ChainProtocol = 'evm' | 'starknet';

/** The standard networks (docs/configuration.md). Others of a known family may be configured too. */
export const KNOWN_NETWORKS: readonly string[] = [
  'ethereum-mainnet',
  'ethereum-sepolia',
  'ethereum-holesky',
  'polygon-mainnet',
  'polygon-amoy',
  'arbitrum-mainnet',
  'arbitrum-sepolia',
  'optimism-mainnet',
  'optimism-sepolia',
  'base-mainnet',
  'base-sepolia',
  'linea-mainnet',
  'linea-sepolia',
  'avalanche-mainnet',
  'avalanche-fuji',
  'bsc-mainnet',
  'bsc-testnet',
  'blast-mainnet',
  'blast-sepolia',
  'zksync-mainnet',
  'zksync-sepolia',
  'starknet-mainnet',
  'starknet-sepolia',
];

export const NETWORK_SLUG = /^[a-z0-9]+-[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Base credits per call: 20 for Ethereum-compatible chains and Starknet, 30 for the zk-rollup (zkSync Era). */
export function defaultBaseCredits(family: ChainFamily): number {
  return family === 'zksync' ? 30 : 20;
}

export function protocolOf(family: ChainFamily): ChainProtocol {
  return family === 'starknet' ? 'starknet' : 'evm';
}

export function isChainFamily(value: string): value is ChainFamily {
  return (CHAIN_FAMILIES as readonly string[]).includes(value);
}

/** The family a slug names by its first segment (`base-sepolia` → base), if it is one of the eleven. */
export function familyOfSlug(slug: string): ChainFamily | undefined {
  const prefix = slug.split('-')[0] ?? '';
  return isChainFamily(prefix) ? prefix : undefined;
}

/** `RPC_UPSTREAM_ETHEREUM_SEPOLIA` → `ethereum-sepolia`. */
export const slugOfEnvName = (name: string): string =>
  name.slice('RPC_UPSTREAM_'.length).toLowerCase().replaceAll('_', '-');
