import type { AccountService } from './accounts/account.service.ts';
import type { ScrapeService } from './augment/scrape.service.ts';
import type { SearchService } from './augment/search.service.ts';
import type { TextParserService } from './augment/text-parser.service.ts';
import type { ApiKeyService } from './auth/api-key.service.ts';
import type { AuthService } from './auth/auth.service.ts';
import type { LastUsedTracker } from './auth/last-used.ts';
import type { AnalyticsService } from './billing/analytics.service.ts';
import type { BalanceService } from './billing/balance.service.ts';
import type { BillingService } from './billing/billing.service.ts';
import type { UsageHistoryService } from './billing/usage-history.ts';
import type { UsageService } from './billing/usage.service.ts';
import type { CatalogService } from './catalog/catalog.service.ts';
import type { CharacterService } from './characters/character.service.ts';
import type { CharacterReviewService } from './characters/review.service.ts';
import type { ChatService } from './chat/chat.service.ts';
import type { Config } from './config.ts';
import type { CryptoRpcService } from './crypto-rpc/rpc-proxy.service.ts';
import type { Web3KeyService } from './auth/web3-keys.service.ts';
import type { EventBus } from './events/event-bus.ts';
import type { MediaKit } from './media/media.wiring.ts';
import type { ImageServices } from './media/images/image.wiring.ts';
import type { BackgroundRemovalService } from './media/images/background-removal.service.ts';
import type { createImageEditService } from './media/images/image-edit.wiring.ts';
import type { JobServices } from './media/jobs/job.wiring.ts';
import type { WebhookService } from './webhooks/webhook.service.ts';
import type { EmbeddingService } from './embeddings/embedding.service.ts';
import type { ResponsesService } from './responses/responses.service.ts';
import type { TranscriptionService } from './media/transcription/transcription.service.ts';
import type { SpeechService } from './media/speech/speech.wiring.ts';
import type { OperatorService } from './operator/operator.service.ts';
import type { OperatorTokenService } from './operator/operator-tokens.ts';
import type { OperatorConfig } from './operator-config/schema.ts';
import type { ChatGateway } from './providers/chat/chat-gateway.ts';
import type { AppMetrics } from './observability/app-metrics.ts';
import type { CallLog } from './observability/call-log.ts';
import type { ModelDiscovery } from './providers/chat/model-discovery.ts';
import type { RateLimitService } from './rate-limits/rate-limit-status.ts';
import type { RateLimiter } from './rate-limits/rate-limiter.ts';
import type { SignInSite } from './wallets/sign-in-site.ts';
import type { WalletService } from './wallets/wallet.service.ts';
import type { TopUpService } from './wallets/top-up.service.ts';

/**
 * What REST handlers, GraphQL resolvers and the CLI are handed: one service per domain, each a set of operations
 * that take the caller's AuthContext first. Nothing here starts, stops or wires anything.
 */
export interface Operations {
  readonly auth: AuthService;
  readonly apiKeys: ApiKeyService;
  /** API keys for wallets that sign a token (GET/POST /api_keys/generate_web3_key). */
  readonly web3Keys: Web3KeyService;
  readonly accounts: AccountService;
  /** Operator tokens (the GraphQL operator operations' credential), made and revoked with the CLI. */
  readonly operatorTokens: OperatorTokenService;
  /** The operator's view over every account: accounts, credits and debits, usage, upstream health, the job queue. */
  readonly operator: OperatorService;
  readonly catalog: CatalogService;
  readonly characters: CharacterService;
  /** Character reviews: read by accounts, added by the operator. */
  readonly characterReviews: CharacterReviewService;
  readonly search: SearchService;
  /** One web page as Markdown (POST /augment/scrape), billed per page. */
  readonly scrape: ScrapeService;
  readonly textParser: TextParserService;
  readonly usage: UsageService;
  /** The usage ledger walked by signed cursor (GET /billing/usage-history). */
  readonly usageHistory: UsageHistoryService;
  readonly analytics: AnalyticsService;
  readonly balance: BalanceService;
  /** The metered crypto JSON-RPC proxy (networks from the operator file's `rpc` section and RPC_UPSTREAM_*). */
  readonly cryptoRpc: CryptoRpcService;
  /** Chat completions (REST and GraphQL), billed per token. */
  readonly chat: ChatService;
  /** Media objects and their signed URLs (`GET /media/<token>`). */
  readonly media: Omit<MediaKit, 'sweeper'>;
  /** Image generation, billed per picture (src/media/images/image.wiring.ts). */
  readonly images: Omit<ImageServices, 'engines' | 'gateway'>;
  /** Image edit, multi-edit and upscale, billed per picture (src/media/images/image-edit.wiring.ts). */
  readonly imageEdit: Omit<ReturnType<typeof createImageEditService>, 'close'>;
  /** POST /image/background-remove: one price per picture, local model or an HTTP engine. */
  readonly backgroundRemoval: BackgroundRemovalService;
  /** Text to speech and voice cloning (eSpeak NG built in, OpenAI-compatible speech servers), billed per character. */
  readonly speech: SpeechService;
  /** Embeddings (feature-hashing simulator built in, OpenAI-compatible /v1/embeddings servers), billed per token. */
  readonly embeddings: EmbeddingService;
  /** Speech to text (a labelled, non-recognising simulator built in; OpenAI-compatible servers), per audio second. */
  readonly transcription: TranscriptionService;
  /** The OpenAI Responses API over chat, with stored responses per account (previous_response_id). */
  readonly responses: ResponsesService;
  /** Queued music/audio and video jobs (src/media/jobs/job.wiring.ts): the API service (the workers are wired apart). */
  readonly jobs: Pick<JobServices, 'service'>;
  /** The account's webhook endpoints, their deliveries and the balance-low threshold (src/webhooks/). */
  readonly webhooks: WebhookService;
  /** Per-key rate limits as the caller sees them (GET /api_keys/rate_limits and its log). */
  readonly rateLimits: RateLimitService;
  /** Wallet callers: credit, ledger, 402 bodies, the operator's wallet commands (src/wallets/). */
  readonly wallets: WalletService;
  /** x402 USDC top-ups of wallet accounts (POST /x402/top-up): verify, settle, credit once. */
  readonly topUps: TopUpService;
}

/**
 * One process's services: the operations, the internals only the composition root and tests reach, and the
 * process's background work, started and stopped in one place (src/lifecycle.ts).
 */
export interface Services extends Operations {
  readonly billing: BillingService;
  /** Domain events (in-process, or Redis pub/sub with REDIS_URL); owns its Redis connections. */
  readonly events: EventBus;
  /** Chat upstreams (simulator, openai-compatible, the OPENAI_COMPATIBLE_BASE_URL shortcut) with retries and fallback. */
  readonly chatGateway: ChatGateway;
  /** Adds the OPENAI_COMPATIBLE_BASE_URL upstream's models to the catalog (started after the catalog sync). */
  readonly modelDiscovery: ModelDiscovery;
  readonly lastUsed: LastUsedTracker;
  /** Per-key, per-model RPM/RPD/TPM counters; paid services call `admit` before they reserve. */
  readonly rateLimiter: RateLimiter;
  /** The wallet sign-in domains and challenge site; told the bound port once the server listens. */
  readonly signInSite: SignInSite;
  /** Starts the background work: model discovery, last-used flushes, the sweep of expired reservations. */
  start(): Promise<void>;
  /**
   * Stops it and closes what the services hold open besides the database (settlements written back, Redis
   * connections, worker threads), in reverse order of construction. Idempotent.
   */
  stop(): Promise<void>;
}

export type ServiceOptions = Pick<Config, 'auth' | 'billing'> & {
  /**
   * The operator file with the env shortcuts' providers merged in (src/operator-config/env-providers.ts): every
   * engine is built from its `providers`. No search provider and no `search` mapping: search answers 503.
   */
  readonly operatorConfig?: Pick<OperatorConfig, 'providers' | 'search' | 'discovery' | 'chat' | 'rpc' | 'rateLimits'>;
  /** Crypto RPC env shortcuts (RPC_UPSTREAM_*, price per credit); none and no `rpc` section: no network is served. */
  readonly rpc?: Config['rpc'];
  /** The zero-config chat upstream's model-list refresh (its provider is in `operatorConfig.providers`). */
  readonly chatUpstream?: Config['chatUpstream'];
  /** Where upstream calls, settlements, holds, refusals, jobs and top-ups are counted (the app's Prometheus metrics). */
  readonly metrics?: AppMetrics;
  /** The running calls' log records, which settlements fill (src/observability/call-log.ts). */
  readonly callLog?: CallLog;
  /** Redis for pub/sub and the analytics cache (none: in-process). */
  readonly redisUrl?: Config['redisUrl'];
  /** Each Redis command's timeout, and the pace of the key cache's probe of its channel (default 500 ms). */
  readonly redisTimeoutMs?: Config['redisTimeoutMs'];
  readonly diemCutoverDate?: Config['diemCutoverDate'];
  /** Text parser pool sizing and budgets (none: the defaults). */
  readonly textParser?: Config['textParser'];
  /** Streamed answers' maximum duration (default 30 minutes). */
  readonly streams?: Config['streams'];
  /** Signed media URLs: secret, lifetime, public origin, sweep interval (none: the defaults). */
  readonly media?: Config['media'];
  readonly jobs?: Config['jobs'];
  /** Webhook delivery timeout, retry window, endpoints per account (none: the defaults). */
  readonly webhooks?: Config['webhooks'];
  readonly backgroundRemoval?: Config['backgroundRemoval'];
  /** Pictures worked on at once and libvips threads per picture (none: cores − 1, min 1). */
  readonly imageWork?: Config['imageWork'];
  /** Built-in speech calls in flight at most (none: 4 per eSpeak thread). */
  readonly speech?: Config['speech'];
  /** Wallet callers: sign-in rules, minimum balance, top-up settings. */
  readonly x402: Config['x402'];
  /** HOST and PORT: the default sign-in domains when neither LAGOON_SIWE_DOMAINS nor LAGOON_PUBLIC_URL is set. */
  readonly http: Pick<Config['http'], 'host' | 'port'>;
};

export type { BillingChoice } from './billing/billing-wiring.ts';
