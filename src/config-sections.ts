import { join } from 'node:path';
import { parseNano, type Nano } from './billing/money.ts';
import type { Environment } from './config-env.ts';

/*
 * Sections of the configuration with checks of their own (the media store, wallet callers), read from the parsed
 * environment by loadConfig (src/config.ts), which re-exports what is declared here.
 */

export class ConfigError extends Error {}

/** Wallet callers (x402 top-ups and sign-in with a wallet); amounts are nano-USD. */
export interface X402Config {
  /** Address top-ups are paid to; unset: no top-ups are offered (`accepts` is empty). Set, it needs a settlement path. */
  readonly receiver: string | undefined;
  readonly usdcAddress: string;
  readonly minTopUpNano: Nano;
  readonly maxTopUpNano: Nano;
  /** A wallet caller whose credit is below this gets the 402 top-up body instead of a call. */
  readonly minBalanceNano: Nano;
  readonly facilitatorUrl: string | undefined;
  /** Base JSON-RPC node: on-chain settlement of top-ups and EIP-1271 (contract wallet) sign-in checks. */
  readonly baseRpcUrl: string | undefined;
  /** Private key that submits `transferWithAuthorization` when no facilitator is configured. Secret. */
  readonly settlementKey: string | undefined;
  /** Blocks a block must be under before the top-up sweep takes what it shows as final (src/wallets/top-up-sweep.ts). */
  readonly confirmations: number;
  /** LAGOON_SIWE_DOMAINS (host[:port], lower-case); empty: LAGOON_PUBLIC_URL's host, else the listen address (src/wallets/sign-in-site.ts). */
  readonly siweDomains: readonly string[];
  readonly siweMaxAgeMs: number;
}

/** Where media bytes go: a directory (`local`), an S3-compatible bucket (`s3`), or the database rows. */
export interface MediaStorageConfig {
  readonly kind: 'local' | 's3' | 'database';
  /** The directory of `local` (and of objects stored there before a switch to another kind). */
  readonly dir: string;
  readonly s3:
    | {
        readonly endpoint: string | undefined;
        readonly bucket: string;
        readonly region: string;
        readonly accessKeyId: string | undefined;
        readonly secretAccessKey: string | undefined;
        readonly forcePathStyle: boolean;
        readonly prefix: string;
      }
    | undefined;
  /** Media URLs are S3 pre-signed GETs instead of Lagoon's own `/media/<token>`. */
  readonly presignedUrls: boolean;
}

/** The media store: `s3` when a bucket is set (unless LAGOON_MEDIA_STORAGE says otherwise), else `local`. */
export function mediaStorage(e: Environment): MediaStorageConfig {
  const bucket = e.LAGOON_MEDIA_S3_BUCKET;
  const kind = e.LAGOON_MEDIA_STORAGE ?? (bucket ? 's3' : 'local');
  if (kind === 's3' && !bucket)
    throw new ConfigError('Invalid environment: LAGOON_MEDIA_STORAGE=s3 needs LAGOON_MEDIA_S3_BUCKET');
  if (Boolean(e.LAGOON_MEDIA_S3_ACCESS_KEY_ID) !== Boolean(e.LAGOON_MEDIA_S3_SECRET_ACCESS_KEY))
    throw new ConfigError(
      'Invalid environment: set both LAGOON_MEDIA_S3_ACCESS_KEY_ID and LAGOON_MEDIA_S3_SECRET_ACCESS_KEY, or neither',
    );
  if (e.LAGOON_MEDIA_S3_PRESIGNED_URLS && kind !== 's3')
    throw new ConfigError('Invalid environment: LAGOON_MEDIA_S3_PRESIGNED_URLS needs the s3 media storage');
  return {
    kind,
    dir: e.LAGOON_MEDIA_DIR ?? join(e.LAGOON_DATA_DIR, 'media'),
    s3: bucket
      ? {
          endpoint: e.LAGOON_MEDIA_S3_ENDPOINT,
          bucket,
          region: e.LAGOON_MEDIA_S3_REGION,
          accessKeyId: e.LAGOON_MEDIA_S3_ACCESS_KEY_ID,
          secretAccessKey: e.LAGOON_MEDIA_S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.LAGOON_MEDIA_S3_FORCE_PATH_STYLE,
          prefix: e.LAGOON_MEDIA_S3_PREFIX,
        }
      : undefined,
    presignedUrls: e.LAGOON_MEDIA_S3_PRESIGNED_URLS,
  };
}

export function x402FromEnv(e: Environment): X402Config {
  const minTopUpNano = parseNano(e.LAGOON_X402_MIN_TOP_UP_USD);
  const maxTopUpNano = parseNano(e.LAGOON_X402_MAX_TOP_UP_USD);
  if (minTopUpNano <= 0n || maxTopUpNano < minTopUpNano)
    throw new ConfigError(
      'Invalid environment: LAGOON_X402_MIN_TOP_UP_USD must be above 0 and at most LAGOON_X402_MAX_TOP_UP_USD',
    );
  // Offering top-ups that cannot settle would have wallets sign payments that all end in 503.
  const onChain = e.LAGOON_BASE_RPC_URL && e.LAGOON_X402_SETTLEMENT_KEY;
  if (e.LAGOON_X402_RECEIVER && !e.LAGOON_X402_FACILITATOR_URL && !onChain) {
    const missing = [
      e.LAGOON_BASE_RPC_URL ? undefined : 'LAGOON_BASE_RPC_URL',
      e.LAGOON_X402_SETTLEMENT_KEY ? undefined : 'LAGOON_X402_SETTLEMENT_KEY',
    ].filter((name) => name !== undefined);
    throw new ConfigError(
      'Invalid environment: LAGOON_X402_RECEIVER is set, but nothing could settle a top-up: set ' +
        `LAGOON_X402_FACILITATOR_URL, or LAGOON_BASE_RPC_URL and LAGOON_X402_SETTLEMENT_KEY (missing: ${missing.join(', ')}) ` +
        'to settle on chain; or unset LAGOON_X402_RECEIVER to offer no top-ups',
    );
  }
  return {
    receiver: e.LAGOON_X402_RECEIVER,
    usdcAddress: e.LAGOON_X402_USDC_ADDRESS,
    minTopUpNano,
    maxTopUpNano,
    minBalanceNano: parseNano(e.LAGOON_X402_MIN_BALANCE_USD),
    facilitatorUrl: e.LAGOON_X402_FACILITATOR_URL,
    baseRpcUrl: e.LAGOON_BASE_RPC_URL,
    settlementKey: e.LAGOON_X402_SETTLEMENT_KEY,
    confirmations: e.LAGOON_X402_CONFIRMATIONS,
    siweDomains: e.LAGOON_SIWE_DOMAINS.split(',')
      .map((domain) => domain.trim().toLowerCase())
      .filter(Boolean),
    siweMaxAgeMs: e.LAGOON_SIWE_MAX_AGE_SECONDS * 1000,
  };
}
