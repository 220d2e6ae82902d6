import { formatAtto, parseAtto, type Atto } from '../billing/money.ts';
import type { ProviderConfig } from '../operator-config/schema.ts';
import type { RpcConfig } from '../operator-config/rpc-config.ts';
import { HttpJsonRpcEngine, JSON_RPC_DEFAULTS } from '../providers/json-rpc/http-json-rpc.engine.ts';
import type { JsonRpcEngine } from '../providers/json-rpc/json-rpc-engine.ts';
import { factoryOf } from '../providers/registry.ts';
import { JsonRpcUpstreamSet } from '../providers/json-rpc/upstream-set.ts';
import { DEFAULT_CAPS, RPC_TIERS, type CapLimits, type RpcTier } from './caps.ts';
import { defaultBaseCredits, familyOfSlug, type ChainFamily } from './chains.ts';
import { DEFAULT_PRICE_PER_CREDIT_USD } from './credits.ts';

/** One network the proxy serves. */
export interface RpcNetwork {
  readonly slug: string;
  readonly family: ChainFamily;
  readonly baseCredits: number;
  readonly upstreams: JsonRpcUpstreamSet;
  /** The longest a call can take: every node tried once at its timeout. */
  readonly worstCaseMs: number;
}

/** The env shortcuts as src/config.ts reads them. */
export interface RpcEnvShortcuts {
  readonly upstreams: Readonly<Record<string, readonly string[]>>;
  readonly pricePerCreditUsd: string | undefined;
}

export interface RpcSetup {
  /** By slug. */
  readonly networks: ReadonlyMap<string, RpcNetwork>;
  readonly pricePerCreditAtto: Atto;
  readonly pricePerCreditUsd: string;
  readonly caps: Readonly<Record<RpcTier, CapLimits>>;
  /** The cost headers' prefixes, lowercase: `x-service` (the contract's), then the operator's extra one if set. */
  readonly costHeaderPrefixes: readonly string[];
}

export const RPC_DEFAULTS = { ...JSON_RPC_DEFAULTS, cooldownMs: 15_000 } as const;

/**
 * The served networks: the operator file's `rpc.networks` (URLs or json-rpc providers), then the
 * `RPC_UPSTREAM_<SLUG>` env shortcuts for slugs the file does not set. The price per credit comes from the file,
 * else LAGOON_RPC_PRICE_PER_CREDIT_USD, else the default 0.000000625 USD (docs/api.md, Methods and credits).
 */
export function buildRpcSetup(input: {
  providers: readonly ProviderConfig[];
  rpc: RpcConfig | undefined;
  env: RpcEnvShortcuts | undefined;
}): RpcSetup {
  const providers = new Map(input.providers.filter((p) => p.type === 'json-rpc').map((p) => [p.id, p]));
  const shared = new Map<string, JsonRpcEngine>();
  const networks = new Map<string, RpcNetwork>();

  const fromUrl = (id: string, url: string, timeoutMs: number): JsonRpcEngine =>
    new HttpJsonRpcEngine(id, {
      url,
      timeoutMs,
      headers: {},
      maxResponseBytes: RPC_DEFAULTS.maxResponseBytes,
      connections: RPC_DEFAULTS.connections,
    });
  const fromProvider = (config: ProviderConfig): JsonRpcEngine => {
    let upstream = shared.get(config.id);
    if (!upstream) {
      // Only json-rpc providers reach here (the filter above), and their type makes a node.
      const make = factoryOf(config, 'jsonRpc');
      if (!make) throw new Error(`Provider "${config.id}" is not a JSON-RPC node`);
      upstream = make(config);
      shared.set(config.id, upstream);
    }
    return upstream;
  };

  for (const [slug, network] of Object.entries(input.rpc?.networks ?? {})) {
    const family = network.family ?? familyOfSlug(slug);
    if (!family) continue; // the operator config's cross-check already refused this
    const timeoutMs = network.timeoutMs ?? RPC_DEFAULTS.timeoutMs;
    let worstCaseMs = 0;
    const upstreams = network.upstreams.map((ref, index) => {
      const provider = providers.get(ref);
      worstCaseMs += provider ? (provider.timeoutMs ?? RPC_DEFAULTS.timeoutMs) : timeoutMs;
      return provider ? fromProvider(provider) : fromUrl(`${slug}#${index + 1}`, ref, timeoutMs);
    });
    const set = new JsonRpcUpstreamSet(slug, upstreams, network.cooldownMs ?? RPC_DEFAULTS.cooldownMs);
    networks.set(slug, {
      slug,
      family,
      baseCredits: network.baseCredits ?? defaultBaseCredits(family),
      upstreams: set,
      worstCaseMs,
    });
  }
  for (const [slug, urls] of Object.entries(input.env?.upstreams ?? {})) {
    const family = familyOfSlug(slug);
    if (networks.has(slug) || !family || urls.length === 0) continue;
    const upstreams = urls.map((url, index) => fromUrl(`env:${slug}#${index + 1}`, url, RPC_DEFAULTS.timeoutMs));
    const set = new JsonRpcUpstreamSet(slug, upstreams, RPC_DEFAULTS.cooldownMs);
    networks.set(slug, {
      slug,
      family,
      baseCredits: defaultBaseCredits(family),
      upstreams: set,
      worstCaseMs: urls.length * RPC_DEFAULTS.timeoutMs,
    });
  }

  const price = input.rpc?.pricePerCreditUsd ?? input.env?.pricePerCreditUsd ?? DEFAULT_PRICE_PER_CREDIT_USD;
  const pricePerCreditAtto = parseAtto(price);
  const caps = Object.fromEntries(
    RPC_TIERS.map((tier) => [tier, { ...DEFAULT_CAPS[tier], ...definedOnly(input.rpc?.caps?.[tier]) }]),
  ) as Record<RpcTier, CapLimits>;
  const extraPrefix = input.rpc?.costHeaderPrefix?.toLowerCase();
  const costHeaderPrefixes = ['x-service', ...(extraPrefix && extraPrefix !== 'x-service' ? [extraPrefix] : [])];
  return { networks, pricePerCreditAtto, pricePerCreditUsd: formatAtto(pricePerCreditAtto), caps, costHeaderPrefixes };
}

function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
