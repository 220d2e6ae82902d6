import { z } from 'zod';

/* The environment variables Lagoon reads, with their defaults and bounds (src/config.ts turns them into Config). */

const emptyToUndefined = (value: unknown) => (value === '' ? undefined : value);
const optionalString = z.preprocess(emptyToUndefined, z.string().optional());
const intWithDefault = (fallback: number, min = 0) =>
  z.preprocess(emptyToUndefined, z.coerce.number().int().min(min).default(fallback));
const boolWithDefault = (fallback: boolean) =>
  z.preprocess(
    (value) =>
      value === '' || value === undefined
        ? undefined
        : ['1', 'true', 'yes', 'on'].includes(String(value).toLowerCase()),
    z.boolean().default(fallback),
  );

/** USDC on Base mainnet (chain 8453): the default top-up asset. */
export const BASE_USDC_ADDRESS = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const evmAddress = z.string().regex(EVM_ADDRESS, 'a 0x-prefixed 20-byte hex address');
/** A USD amount as decimal text (read exactly later, never as a float). */
const usdWithDefault = (fallback: string) =>
  z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d+(\.\d{1,9})?$/, 'a plain decimal such as 0.10')
      .default(fallback),
  );

export const EnvironmentModel = z.object({
  NODE_ENV: z.preprocess(emptyToUndefined, z.enum(['development', 'production', 'test']).default('production')),
  HOST: z.preprocess(emptyToUndefined, z.string().default('127.0.0.1')),
  PORT: intWithDefault(8080),
  DATABASE_URL: optionalString,
  LAGOON_DATA_DIR: z.preprocess(emptyToUndefined, z.string().default('./.lagoon')),
  LAGOON_PG_PREPARED_STATEMENTS: boolWithDefault(true),
  LAGOON_CONFIG: optionalString,
  LAGOON_BOOTSTRAP_ADMIN_KEY: optionalString,
  LAGOON_ADMIN_KEY: optionalString,
  REDIS_URL: optionalString,
  // OpenTelemetry: traces are exported when an endpoint is set (src/observability/tracing.ts); the SDK reads the
  // other OTEL_* variables (headers, service name, sampler, batching) itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString,
  OTEL_TRACES_EXPORTER: optionalString,
  OTEL_SDK_DISABLED: boolWithDefault(false),
  LAGOON_REDIS_TIMEOUT_MS: intWithDefault(500, 10),
  CORS_ORIGINS: z.preprocess(emptyToUndefined, z.string().default('')),
  LOG_LEVEL: z.preprocess(
    emptyToUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  LAGOON_MAX_JSON_BYTES: intWithDefault(1_048_576, 1),
  LAGOON_MAX_CHAT_BODY_BYTES: intWithDefault(20_971_520, 1),
  LAGOON_MAX_MEDIA_BODY_BYTES: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).optional()),
  LAGOON_KEY_CACHE_TTL_SECONDS: intWithDefault(30),
  LAGOON_LAST_USED_FLUSH_SECONDS: intWithDefault(15, 1),
  LAGOON_RESERVATION_TIMEOUT_SECONDS: intWithDefault(900, 1),
  LAGOON_SWEEP_INTERVAL_SECONDS: intWithDefault(60, 1),
  LAGOON_MAX_STREAM_SECONDS: intWithDefault(1800, 1),
  LAGOON_BALANCE_LEASES: boolWithDefault(true),
  LAGOON_SHUTDOWN_TIMEOUT_SECONDS: intWithDefault(15, 1),
  LAGOON_MAX_IN_FLIGHT: intWithDefault(1_024, 0),
  LAGOON_MAX_KEYS_PER_ACCOUNT: intWithDefault(500, 1),
  // Introspection counts too: GraphiQL's introspection query is 15 deep and costs about 15,600 (docs/api.md).
  GRAPHQL_MAX_DEPTH: intWithDefault(15, 1),
  GRAPHQL_MAX_COST: intWithDefault(20_000, 1),
  GRAPHQL_MAX_ALIASES: intWithDefault(30, 0),
  GRAPHQL_MAX_TOKENS: intWithDefault(2_000, 1),
  GRAPHQL_MAX_DIRECTIVES: intWithDefault(20, 0),
  GRAPHQL_MAX_PAID_FIELDS: intWithDefault(10, 1),
  LAGOON_GRAPHQL_INTROSPECTION: z.preprocess(emptyToUndefined, z.enum(['on', 'authenticated', 'off']).default('on')),
  GRAPHIQL: boolWithDefault(true),
  LAGOON_CONTROL_SOCKET: boolWithDefault(true),
  LAGOON_HEAP_GROWING_PERCENT: intWithDefault(120),
  LAGOON_TEXT_PARSER_WORKERS: intWithDefault(0),
  LAGOON_IMAGE_THREADS: intWithDefault(0),
  LAGOON_IMAGE_PRIORITY: z.preprocess(emptyToUndefined, z.enum(['idle', 'low']).default('idle')),
  LAGOON_IMAGE_INPUT_MAX_TOTAL_PIXELS: intWithDefault(33_177_600, 1),
  LAGOON_SPEECH_MAX_CALLS: intWithDefault(0),
  LAGOON_TEXT_PARSER_PER_ACCOUNT: intWithDefault(2, 1),
  LAGOON_TEXT_PARSER_TIMEOUT_SECONDS: intWithDefault(10, 1),
  LAGOON_TEXT_PARSER_QUEUE_SECONDS: intWithDefault(10, 1),
  SEARXNG_URL: optionalString,
  BRAVE_SEARCH_API_KEY: optionalString,
  BRAVE_SEARCH_URL: optionalString,
  OPENAI_COMPATIBLE_BASE_URL: z.preprocess(emptyToUndefined, z.url().optional()),
  OPENAI_COMPATIBLE_API_KEY: optionalString,
  OPENAI_COMPATIBLE_REFRESH_SECONDS: intWithDefault(300, 0),
  LAGOON_DIEM_CUTOVER_DATE: z.preprocess(emptyToUndefined, z.iso.date().default('2025-01-01')),
  LAGOON_PUBLIC_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  LAGOON_MEDIA_SECRET: z.preprocess(emptyToUndefined, z.string().min(32, 'at least 32 characters').optional()),
  LAGOON_MEDIA_URL_TTL_SECONDS: intWithDefault(3600, 1),
  LAGOON_JOB_CONCURRENCY: intWithDefault(2, 1),
  LAGOON_JOB_WORKERS: boolWithDefault(true),
  LAGOON_JOB_RETRIES: intWithDefault(2, 0),
  LAGOON_JOB_TIMEOUT_SECONDS: intWithDefault(1800, 1),
  LAGOON_JOB_HEARTBEAT_SECONDS: intWithDefault(30, 10),
  LAGOON_JOB_HOLD_SECONDS: intWithDefault(3600, 120),
  LAGOON_MEDIA_RETENTION_HOURS: intWithDefault(24, 1),
  LAGOON_WEBHOOK_TIMEOUT_MS: intWithDefault(10_000, 100),
  LAGOON_WEBHOOK_RETRY_SECONDS: intWithDefault(86_400, 0),
  LAGOON_WEBHOOK_FIRST_RETRY_SECONDS: intWithDefault(30, 1),
  LAGOON_WEBHOOK_MAX_ENDPOINTS: intWithDefault(10, 1),
  LAGOON_MEDIA_SWEEP_SECONDS: intWithDefault(300, 1),
  LAGOON_MEDIA_STORAGE: z.preprocess(emptyToUndefined, z.enum(['local', 's3', 'database']).optional()),
  LAGOON_MEDIA_DIR: optionalString,
  LAGOON_MEDIA_S3_ENDPOINT: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  LAGOON_MEDIA_S3_BUCKET: optionalString,
  LAGOON_MEDIA_S3_REGION: z.preprocess(emptyToUndefined, z.string().default('us-east-1')),
  LAGOON_MEDIA_S3_ACCESS_KEY_ID: optionalString,
  LAGOON_MEDIA_S3_SECRET_ACCESS_KEY: optionalString,
  LAGOON_MEDIA_S3_FORCE_PATH_STYLE: boolWithDefault(false),
  LAGOON_MEDIA_S3_PREFIX: z.preprocess(emptyToUndefined, z.string().default('')),
  LAGOON_MEDIA_S3_PRESIGNED_URLS: boolWithDefault(false),
  LAGOON_RPC_PRICE_PER_CREDIT_USD: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d+(\.\d{1,18})?$/, 'a plain decimal such as 0.000000625')
      .optional(),
  ),
  LAGOON_BACKGROUND_REMOVAL_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  LAGOON_BACKGROUND_REMOVAL_MODEL: z.preprocess(emptyToUndefined, z.enum(['small', 'medium']).default('small')),
  LAGOON_BACKGROUND_REMOVAL_PRICE_USD: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d+(\.\d{1,9})?$/, 'a plain decimal such as 0.02')
      .default('0.02'),
  ),
  LAGOON_X402_RECEIVER: z.preprocess(emptyToUndefined, evmAddress.optional()),
  LAGOON_X402_USDC_ADDRESS: z.preprocess(emptyToUndefined, evmAddress.default(BASE_USDC_ADDRESS)),
  LAGOON_X402_MIN_TOP_UP_USD: usdWithDefault('5'),
  LAGOON_X402_MAX_TOP_UP_USD: usdWithDefault('10000'),
  LAGOON_X402_MIN_BALANCE_USD: usdWithDefault('0.10'),
  LAGOON_X402_FACILITATOR_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  LAGOON_BASE_RPC_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  LAGOON_X402_SETTLEMENT_KEY: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte hex private key')
      .optional(),
  ),
  LAGOON_X402_CONFIRMATIONS: intWithDefault(10),
  LAGOON_SIWE_DOMAINS: z.preprocess(emptyToUndefined, z.string().default('')),
  LAGOON_SIWE_MAX_AGE_SECONDS: intWithDefault(600, 1),
});

export type Environment = z.infer<typeof EnvironmentModel>;
