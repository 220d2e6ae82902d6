import type { BackgroundPriority } from './thread-priority.ts';
import { EnvironmentModel, type Environment } from './config-env.ts';
import { familyOfSlug, NETWORK_SLUG, slugOfEnvName } from './crypto-rpc/chains.ts';
import { ConfigError, mediaStorage, x402FromEnv, type MediaStorageConfig, type X402Config } from './config-sections.ts';

export { BASE_USDC_ADDRESS, type Environment } from './config-env.ts';
export { ConfigError, type MediaStorageConfig, type X402Config } from './config-sections.ts';

/** The bounds every GraphQL document is checked against before it runs (schema/limits.ts, docs/api.md). */
export interface GraphQLLimits {
  readonly maxDepth: number;
  readonly maxCost: number;
  readonly maxAliases: number;
  readonly maxTokens: number;
  readonly maxDirectives: number;
  /** Root fields that charge the caller (schema/paid-fields.ts), per operation. */
  readonly maxPaidFields: number;
  /** `authenticated`: only callers with a valid API key may ask for `__schema` / `__type`. */
  readonly introspection: 'on' | 'authenticated' | 'off';
}

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  /** Whether NODE_ENV=production was set, not just defaulted: a server looks public then (src/public-settings.ts). */
  readonly productionSet: boolean;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly corsOrigins: readonly string[];
    readonly maxJsonBytes: number;
    readonly maxChatBodyBytes: number;
    /** Unset: as large as the largest documented video job input sent inline (src/body-limits.ts). */
    readonly maxMediaBodyBytes: number | undefined;
    readonly shutdownTimeoutMs: number;
    /** Requests (streams and WebSockets while open) in flight per process before new ones get 503; 0 = no limit. */
    readonly maxInFlight: number;
  };
  readonly database: {
    readonly url: string | undefined;
    readonly dataDir: string;
    readonly preparedStatements: boolean;
  };
  readonly operatorConfigPath: string | undefined;
  readonly bootstrapAdminKey: string | undefined;
  /** LAGOON_ADMIN_KEY: the operator CLI's `--key` when a command is given neither `--key` nor `--account`. */
  readonly cliAdminKey: string | undefined;
  readonly redisUrl: string | undefined;
  /** Each Redis command's timeout; a hung Redis counts as down (src/events/redis.ts, src/auth/key-cache-sync.ts). */
  readonly redisTimeoutMs: number;
  readonly logLevel: Environment['LOG_LEVEL'];
  /** Spans exported over OTLP: an OTLP endpoint is set, and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none. */
  readonly tracing: { readonly enabled: boolean };
  readonly auth: {
    readonly keyCacheTtlMs: number;
    readonly lastUsedFlushMs: number;
    readonly maxKeysPerAccount: number;
  };
  readonly billing: {
    readonly reservationTimeoutMs: number;
    readonly sweepIntervalMs: number;
    readonly balanceLeases: boolean;
  };
  /** A streamed answer ends (finish_reason "length", charged for what it delivered) once it has run this long. */
  readonly streams: { readonly maxDurationMs: number };
  readonly graphql: GraphQLLimits & { readonly graphiql: boolean };
  readonly controlSocket: boolean;
  /** V8 grows the heap by this percentage after each full collection (0: V8's own choice); see docs/performance.md. */
  readonly heapGrowingPercent: number;
  /** Text parser worker threads (0: one per core), documents of one account at once, budget per document, wait for a worker. */
  readonly textParser: {
    readonly workers: number;
    readonly perAccount: number;
    readonly timeoutMs: number;
    readonly queueTimeoutMs: number;
  };
  /**
   * Pictures worked on at once and libvips threads per picture (0: cores − 1, min 1), and how those threads are
   * scheduled (`idle`: only on cycles nothing else wants; `low`: nice 10); src/media/images/pixel-work.ts. The most
   * pixels a caller's picture may have in all its frames (src/media/images/image-input.ts).
   */
  readonly imageWork: {
    readonly threads: number;
    readonly priority: BackgroundPriority;
    readonly maxInputTotalPixels: number;
  };
  /** Built-in (eSpeak NG) speech calls in flight per process, past which 503 (0: 4 per eSpeak thread). */
  readonly speech: { readonly maxCalls: number };
  /** Env shortcuts for web search upstreams (the operator config file can declare them too). */
  readonly search: {
    readonly searxngUrl: string | undefined;
    readonly braveApiKey: string | undefined;
    readonly braveUrl: string | undefined;
  };
  /** Usage export: DIEM entries before this UTC day are the legacy VCU (`warningMessage`, docs/api.md). */
  readonly diemCutoverDate: Date;
  /**
   * Crypto RPC env shortcuts: `RPC_UPSTREAM_<SLUG>` node URLs per network slug (comma-separated, in failover
   * order) and the price per credit. The operator file's `rpc` section wins for a network or price it sets.
   */
  readonly rpc: {
    readonly upstreams: Readonly<Record<string, readonly string[]>>;
    readonly pricePerCreditUsd: string | undefined;
  };
  /** Zero-config chat upstream (provider `openai-compatible`): its GET /models is read at start and every refreshMs (0: only at start). */
  readonly chatUpstream: {
    readonly baseUrl: string | undefined;
    readonly apiKey: string | undefined;
    readonly refreshMs: number;
  };
  /** Queued audio/video jobs (src/media/jobs): workers, retries, holds and how long results are kept. */
  readonly jobs: {
    readonly concurrency: number;
    readonly workers: boolean;
    readonly retries: number;
    readonly timeoutMs: number;
    /** A running attempt's worker beats this often; a dead worker's job is handed out again about this long after. */
    readonly heartbeatSeconds: number;
    readonly holdTtlMs: number;
    readonly mediaTtlMs: number;
  };
  /**
   * Account webhooks (src/webhooks/): one delivery's time limit, how long a failing delivery is retried (exponential
   * backoff from the first retry's delay), and endpoints per account.
   */
  readonly webhooks: {
    readonly timeoutMs: number;
    readonly retryWindowSeconds: number;
    readonly firstRetrySeconds: number;
    readonly maxEndpoints: number;
  };
  /** POST /image/background-remove: an HTTP engine (rembg-style) when `url` is set, else the local model. */
  readonly backgroundRemoval: {
    readonly url: string | undefined;
    readonly model: 'small' | 'medium';
    readonly priceUsd: string;
  };
  /**
   * Media served by signed URL (src/media/): the HMAC secret every process shares (none: one generated and kept in
   * the database), how long a URL lives, the public origin URLs are built on (none: the request's), how often
   * expired objects are deleted, and where their bytes are stored (src/media/storage/).
   */
  readonly media: {
    readonly secret: string | undefined;
    readonly urlTtlMs: number;
    readonly publicUrl: string | undefined;
    readonly sweepIntervalMs: number;
    readonly storage: MediaStorageConfig;
  };
  readonly x402: X402Config;
}

/** Parses the environment once. Nothing else in the code base reads process.env. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = EnvironmentModel.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid environment: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    env: e.NODE_ENV,
    productionSet: env.NODE_ENV === 'production',
    http: {
      host: e.HOST,
      port: e.PORT,
      corsOrigins: e.CORS_ORIGINS.split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
      maxJsonBytes: e.LAGOON_MAX_JSON_BYTES,
      maxChatBodyBytes: e.LAGOON_MAX_CHAT_BODY_BYTES,
      maxMediaBodyBytes: e.LAGOON_MAX_MEDIA_BODY_BYTES,
      shutdownTimeoutMs: e.LAGOON_SHUTDOWN_TIMEOUT_SECONDS * 1000,
      maxInFlight: e.LAGOON_MAX_IN_FLIGHT,
    },
    database: { url: e.DATABASE_URL, dataDir: e.LAGOON_DATA_DIR, preparedStatements: e.LAGOON_PG_PREPARED_STATEMENTS },
    operatorConfigPath: e.LAGOON_CONFIG,
    bootstrapAdminKey: e.LAGOON_BOOTSTRAP_ADMIN_KEY,
    cliAdminKey: e.LAGOON_ADMIN_KEY,
    redisUrl: e.REDIS_URL,
    redisTimeoutMs: e.LAGOON_REDIS_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    tracing: { enabled: tracingEnabled(e) },
    auth: {
      keyCacheTtlMs: e.LAGOON_KEY_CACHE_TTL_SECONDS * 1000,
      lastUsedFlushMs: e.LAGOON_LAST_USED_FLUSH_SECONDS * 1000,
      maxKeysPerAccount: e.LAGOON_MAX_KEYS_PER_ACCOUNT,
    },
    billing: {
      reservationTimeoutMs: e.LAGOON_RESERVATION_TIMEOUT_SECONDS * 1000,
      sweepIntervalMs: e.LAGOON_SWEEP_INTERVAL_SECONDS * 1000,
      balanceLeases: e.LAGOON_BALANCE_LEASES,
    },
    streams: { maxDurationMs: e.LAGOON_MAX_STREAM_SECONDS * 1000 },
    graphql: graphqlLimits(e),
    controlSocket: e.LAGOON_CONTROL_SOCKET,
    heapGrowingPercent: e.LAGOON_HEAP_GROWING_PERCENT,
    textParser: {
      workers: e.LAGOON_TEXT_PARSER_WORKERS,
      perAccount: e.LAGOON_TEXT_PARSER_PER_ACCOUNT,
      timeoutMs: e.LAGOON_TEXT_PARSER_TIMEOUT_SECONDS * 1000,
      queueTimeoutMs: e.LAGOON_TEXT_PARSER_QUEUE_SECONDS * 1000,
    },
    imageWork: {
      threads: e.LAGOON_IMAGE_THREADS,
      priority: e.LAGOON_IMAGE_PRIORITY,
      maxInputTotalPixels: e.LAGOON_IMAGE_INPUT_MAX_TOTAL_PIXELS,
    },
    speech: { maxCalls: e.LAGOON_SPEECH_MAX_CALLS },
    search: { searxngUrl: e.SEARXNG_URL, braveApiKey: e.BRAVE_SEARCH_API_KEY, braveUrl: e.BRAVE_SEARCH_URL },
    diemCutoverDate: new Date(`${e.LAGOON_DIEM_CUTOVER_DATE}T00:00:00Z`),
    rpc: { upstreams: rpcUpstreamsFromEnv(env), pricePerCreditUsd: e.LAGOON_RPC_PRICE_PER_CREDIT_USD },
    chatUpstream: {
      baseUrl: e.OPENAI_COMPATIBLE_BASE_URL,
      apiKey: e.OPENAI_COMPATIBLE_API_KEY,
      refreshMs: e.OPENAI_COMPATIBLE_REFRESH_SECONDS * 1000,
    },
    jobs: jobQueue(e),
    webhooks: webhookOptions(e),
    backgroundRemoval: {
      url: e.LAGOON_BACKGROUND_REMOVAL_URL,
      model: e.LAGOON_BACKGROUND_REMOVAL_MODEL,
      priceUsd: e.LAGOON_BACKGROUND_REMOVAL_PRICE_USD,
    },
    media: mediaConfig(e),
    x402: x402FromEnv(e),
  });
}

/** Spans are exported when an OTLP endpoint is named and the standard variables do not turn the SDK off. */
function tracingEnabled(e: Environment): boolean {
  return (
    !e.OTEL_SDK_DISABLED &&
    e.OTEL_TRACES_EXPORTER?.trim() !== 'none' &&
    (e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_ENDPOINT) !== undefined
  );
}

/** The account webhooks' delivery timeout, retry window and endpoint limit. */
function webhookOptions(e: Environment): Config['webhooks'] {
  return {
    timeoutMs: e.LAGOON_WEBHOOK_TIMEOUT_MS,
    retryWindowSeconds: e.LAGOON_WEBHOOK_RETRY_SECONDS,
    firstRetrySeconds: e.LAGOON_WEBHOOK_FIRST_RETRY_SECONDS,
    maxEndpoints: e.LAGOON_WEBHOOK_MAX_ENDPOINTS,
  };
}

/** The GraphQL endpoint's limits and tools. */
function graphqlLimits(e: Environment): Config['graphql'] {
  return {
    maxDepth: e.GRAPHQL_MAX_DEPTH,
    maxCost: e.GRAPHQL_MAX_COST,
    maxAliases: e.GRAPHQL_MAX_ALIASES,
    maxTokens: e.GRAPHQL_MAX_TOKENS,
    maxDirectives: e.GRAPHQL_MAX_DIRECTIVES,
    maxPaidFields: e.GRAPHQL_MAX_PAID_FIELDS,
    introspection: e.LAGOON_GRAPHQL_INTROSPECTION,
    graphiql: e.GRAPHIQL,
  };
}

/** The job queue: how many run, how often they retry and report, how long media is kept. */
function jobQueue(e: Environment): Config['jobs'] {
  return {
    concurrency: e.LAGOON_JOB_CONCURRENCY,
    workers: e.LAGOON_JOB_WORKERS,
    retries: e.LAGOON_JOB_RETRIES,
    timeoutMs: e.LAGOON_JOB_TIMEOUT_SECONDS * 1000,
    heartbeatSeconds: e.LAGOON_JOB_HEARTBEAT_SECONDS,
    holdTtlMs: e.LAGOON_JOB_HOLD_SECONDS * 1000,
    mediaTtlMs: e.LAGOON_MEDIA_RETENTION_HOURS * 3_600_000,
  };
}

/** Media URLs, their signing, and where the bytes are stored. */
function mediaConfig(e: Environment): Config['media'] {
  return {
    secret: e.LAGOON_MEDIA_SECRET,
    urlTtlMs: e.LAGOON_MEDIA_URL_TTL_SECONDS * 1000,
    publicUrl: e.LAGOON_PUBLIC_URL?.replace(/\/+$/, ''),
    sweepIntervalMs: e.LAGOON_MEDIA_SWEEP_SECONDS * 1000,
    storage: mediaStorage(e),
  };
}

/** `RPC_UPSTREAM_ETHEREUM_SEPOLIA=http://a:8545,http://b:8545` → { "ethereum-sepolia": [a, b] }; a bad one stops the start. */
function rpcUpstreamsFromEnv(env: Record<string, string | undefined>): Record<string, string[]> {
  const upstreams: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('RPC_UPSTREAM_') || !value?.trim()) continue;
    const slug = slugOfEnvName(name);
    if (!NETWORK_SLUG.test(slug) || !familyOfSlug(slug)) {
      throw new ConfigError(
        `Invalid environment: ${name}: "${slug}" is not <family>-<network> with a known chain family (e.g. RPC_UPSTREAM_ETHEREUM_SEPOLIA)`,
      );
    }
    const urls = value
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean);
    urls.forEach((url, index) => {
      if (!/^https?:\/\/\S+$/i.test(url) || !URL.canParse(url))
        throw new ConfigError(`Invalid environment: ${name}: entry ${index + 1} is not an http(s) URL`);
    });
    upstreams[slug] = urls;
  }
  return upstreams;
}
