import { z } from 'zod';
import { CHAIN_FAMILIES, familyOfSlug, NETWORK_SLUG } from '../crypto-rpc/chains.ts';
import { httpUrl } from '../http-url.ts';
import type { OperatorConfigIssue } from './issue.ts';
import { EXACT_DECIMAL_MESSAGE, exactDecimal, PROVIDER_ID_PATTERN } from './primitives.ts';

/*
 * The `rpc:` section of the operator file: the crypto JSON-RPC proxy's networks, price per credit and caps.
 *
 *   rpc:
 *     pricePerCreditUsd: 0.000000625
 *     caps: { staff: { requestsPerMinute: 1000, creditsPer24h: 100000000 } }
 *     networks:
 *       ethereum-sepolia:
 *         upstreams: [http://127.0.0.1:8545, alchemy-sepolia]   # node URLs, or ids of json-rpc providers
 *         family: ethereum          # default: the slug's first segment
 *         baseCredits: 20           # default: 20 (30 for zksync)
 *         timeoutMs: 30000
 *         cooldownMs: 15000
 *     costHeaderPrefix: X-Venice   # also send X-Venice-RPC-Credits and X-Venice-RPC-Cost-USD
 */

const isHttpUrl = (value: string): boolean => httpUrl(value) !== undefined;

const UpstreamRef = z
  .string()
  .refine(
    (value) => isHttpUrl(value) || PROVIDER_ID_PATTERN.test(value),
    'an http(s) node URL, or the id of a json-rpc provider',
  );

export const RpcNetworkConfigSchema = z.strictObject({
  upstreams: z
    .union([UpstreamRef, z.array(UpstreamRef).min(1)])
    .transform((refs) => (typeof refs === 'string' ? [refs] : refs)),
  family: z.enum(CHAIN_FAMILIES).optional(),
  baseCredits: z.number().int().positive().max(1_000_000).optional(),
  timeoutMs: z.number().int().positive().max(600_000).optional(),
  cooldownMs: z.number().int().nonnegative().max(3_600_000).optional(),
});
export type RpcNetworkConfig = z.output<typeof RpcNetworkConfigSchema>;

const CapsSchema = z.strictObject({
  requestsPerMinute: z.number().int().positive().optional(),
  creditsPer24h: z.number().int().positive().optional(),
});

export const RpcConfigSchema = z.strictObject({
  /** USD per credit, exact to 18 decimal places (default 0.000000625). */
  pricePerCreditUsd: z.number().positive().refine(exactDecimal, EXACT_DECIMAL_MESSAGE).optional(),
  caps: z.strictObject({ standard: CapsSchema.optional(), staff: CapsSchema.optional() }).optional(),
  /**
   * A second prefix for the cost headers, beside the contract's `X-Service`: `<prefix>-RPC-Credits` and
   * `<prefix>-RPC-Cost-USD` carry the same values, for clients that read another service's header names.
   */
  costHeaderPrefix: z
    .string()
    .regex(/^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$/, 'letters and digits in "-"-separated words, e.g. X-Venice')
    .max(64)
    .optional(),
  /** By network slug (checked in checkRpcConfig, where the message can name the slug). */
  networks: z.record(z.string(), RpcNetworkConfigSchema).default({}),
});
export type RpcConfig = z.output<typeof RpcConfigSchema>;

/** Cross-checks: each network has a family, and provider ids in `upstreams` name json-rpc providers. */
export function checkRpcConfig(
  providers: readonly { value: { readonly id: string; readonly type: string } }[],
  rpc: RpcConfig | undefined,
  issues: OperatorConfigIssue[],
): void {
  const byId = new Map(providers.map((entry) => [entry.value.id, entry.value]));
  const rpcIds = providers.filter((entry) => entry.value.type === 'json-rpc').map((entry) => entry.value.id);
  for (const [slug, network] of Object.entries(rpc?.networks ?? {})) {
    const path = `rpc.networks["${slug}"]`;
    if (!NETWORK_SLUG.test(slug)) {
      issues.push({ path, message: 'a network slug is <family>-<name>: lowercase letters, digits and "-"' });
      continue;
    }
    if (!network.family && !familyOfSlug(slug)) {
      issues.push({
        path: `${path}.family`,
        message: `"${slug}" does not start with a chain family; set family (one of ${CHAIN_FAMILIES.join(', ')})`,
      });
    }
    network.upstreams.forEach((ref, index) => {
      if (isHttpUrl(ref)) return;
      const provider = byId.get(ref);
      if (!provider)
        issues.push({
          path: `${path}.upstreams[${index}]`,
          message: `unknown provider "${ref}" (json-rpc providers: ${rpcIds.join(', ') || 'none'})`,
        });
      else if (provider.type !== 'json-rpc')
        issues.push({
          path: `${path}.upstreams[${index}]`,
          message: `provider "${ref}" has type ${provider.type}; a network needs a json-rpc provider or a URL`,
        });
    });
  }
}
