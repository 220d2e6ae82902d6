import type { BillingService } from '../billing/billing.service.ts';
import type { Database } from '../db/database.ts';
import { createRedisClient } from '../events/redis.ts';
import type { Logger } from '../logger.ts';
import type { OperatorConfig } from '../operator-config/schema.ts';
import { AccountTiers } from './account-tier.ts';
import { RpcCaps } from './caps.ts';
import { IdempotencyStore } from './idempotency.ts';
import { buildRpcSetup, type RpcEnvShortcuts } from './networks.ts';
import { CryptoRpcService } from './rpc-proxy.service.ts';

const DAY_MS = 24 * 60 * 60_000;

/** Wires the crypto RPC proxy: networks from the operator file and env, caps (Redis when configured), idempotency store. */
export function createCryptoRpc(deps: {
  db: Database;
  billing: BillingService;
  logger: Logger;
  operatorConfig: Pick<OperatorConfig, 'providers' | 'rpc'> | undefined;
  env: RpcEnvShortcuts | undefined;
  redisUrl: string | undefined;
  redisTimeoutMs?: number | undefined;
}): CryptoRpcService {
  const setup = buildRpcSetup({
    providers: deps.operatorConfig?.providers ?? [],
    rpc: deps.operatorConfig?.rpc,
    env: deps.env,
  });
  const redis = deps.redisUrl
    ? createRedisClient(deps.redisUrl, deps.logger, 'rpc-caps', { commandTimeoutMs: deps.redisTimeoutMs })
    : undefined;
  const caps = new RpcCaps({ limits: setup.caps, redis, logger: deps.logger });
  const tiers = new AccountTiers({ db: deps.db, ttlMs: 30_000 });
  // The lease outlasts every node being tried once at its timeout; a claim older than that was left by a crash.
  const slowest = Math.max(0, ...[...setup.networks.values()].map((network) => network.worstCaseMs));
  const idempotency = new IdempotencyStore({
    db: deps.db,
    options: { retentionMs: DAY_MS, leaseMs: Math.max(60_000, slowest + 10_000) },
  });
  return new CryptoRpcService({
    db: deps.db,
    billing: deps.billing,
    logger: deps.logger,
    setup,
    caps,
    tiers,
    idempotency,
  });
}
