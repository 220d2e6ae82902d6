import { randomUUID } from 'node:crypto';
import { AccountService } from './accounts/account.service.ts';
import { ScrapeService } from './augment/scrape.service.ts';
import { SearchService } from './augment/search.service.ts';
import { TextParserService } from './augment/text-parser.service.ts';
import { WebScraper } from './augment/scrape/web-scraper.ts';
import { ApiKeyService } from './auth/api-key.service.ts';
import { AuthService } from './auth/auth.service.ts';
import { KeyCache } from './auth/key-cache.ts';
import { keyCacheChannel } from './auth/key-cache-sync.ts';
import { LastUsedTracker } from './auth/last-used.ts';
import { AnalyticsService, createAnalyticsCache } from './billing/analytics.service.ts';
import { BalanceService } from './billing/balance.service.ts';
import { BatchWriter } from './billing/batch-writer.ts';
import { BillingService, type BillingOptions } from './billing/billing.service.ts';
import { TransactionHolds } from './billing/holds.ts';
import { LeasedHolds } from './billing/leased-holds.ts';
import { DEFAULT_LEASE_OPTIONS, type LeaseOptions } from './billing/lease-options.ts';
import { LeaseReclaim } from './billing/lease-reclaim.ts';
import { UsageEventPublisher } from './billing/usage-events.ts';
import type { UsagePublisher } from './billing/usage.types.ts';
import { UsageHistoryService } from './billing/usage-history.ts';
import { UsageService } from './billing/usage.service.ts';
import { CatalogService } from './catalog/catalog.service.ts';
import { CharacterService } from './characters/character.service.ts';
import { CharacterReviewService } from './characters/review.service.ts';
import { ChatService } from './chat/chat.service.ts';
import { loadConfig, type Config } from './config.ts';
import { createCryptoRpc } from './crypto-rpc/create.ts';
import type { CryptoRpcService } from './crypto-rpc/rpc-proxy.service.ts';
import type { Database } from './db/database.ts';
import { instanceSecret } from './instance-secret.ts';
import { Web3KeyService } from './auth/web3-keys.service.ts';
import { createEventBus, type EventBus } from './events/event-bus.ts';
import { Lifecycle, periodic } from './lifecycle.ts';
import type { Logger } from './logger.ts';
import { createMediaKit, DEFAULT_MEDIA_SWEEP_MS, type MediaKit } from './media/create.ts';
import { createImageServices, type ImageServices } from './media/images/create.ts';
import {
  createBackgroundRemovalService,
  type BackgroundRemovalService,
} from './media/images/background-removal.service.ts';
import { createImageEditService } from './media/images/edit-create.ts';
import { createPixelWork, imageThreads } from './media/images/pixel-work.ts';
import { createJobServices, type JobServices } from './media/jobs/create.ts';
import { EmbeddingService } from './embeddings/embedding.service.ts';
import { ResponsesService } from './responses/responses.service.ts';
import { TranscriptionService } from './transcription/transcription.service.ts';
import { TranscriptionGateway } from './providers/transcription/transcription-gateway.ts';
import { EmbeddingGateway } from './providers/embeddings/embedding-gateway.ts';
import { createSpeechService, type SpeechService } from './media/speech/create.ts';
import { WebScrapingConfigSchema, type OperatorConfig } from './operator-config/schema.ts';
import { ChatGateway, type UpstreamMetrics } from './providers/chat/chat-gateway.ts';
import { ModelDiscovery } from './providers/chat/model-discovery.ts';
import { buildSearchRoutes, SearchRouter } from './providers/search/search-routing.ts';
import { createRateLimiter } from './rate-limits/create.ts';
import { RateLimitService } from './rate-limits/rate-limit-status.ts';
import type { RateLimiter } from './rate-limits/rate-limiter.ts';
import { sweepNonces } from './wallets/siwx-nonces.ts';
import { WalletAuthenticator } from './wallets/wallet-auth.ts';
import { WalletService } from './wallets/wallet.service.ts';
import { TopUpService } from './wallets/top-up.service.ts';

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
  /** Image generation, billed per picture (src/media/images/create.ts). */
  readonly images: Omit<ImageServices, 'engines' | 'gateway'>;
  /** Image edit, multi-edit and upscale, billed per picture (src/media/images/edit-create.ts). */
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
  /** Queued music/audio and video jobs (src/media/jobs/create.ts): the API service, its runner and the queue. */
  readonly jobs: JobServices;
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
  /** Starts the background work: model discovery, last-used flushes, the sweep of expired reservations. */
  start(): Promise<void>;
  /**
   * Stops it and closes what the services hold open besides the database (settlements written back, Redis
   * connections, worker threads), in reverse order of construction. Idempotent.
   */
  stop(): Promise<void>;
}

export type ServiceOptions = Pick<Config, 'auth' | 'billing'> & {
  /** Web search env shortcuts and the operator file's providers and `search` mapping (none: search answers 503). */
  readonly search?: Config['search'];
  readonly operatorConfig?: Pick<OperatorConfig, 'providers' | 'search' | 'discovery' | 'chat' | 'rpc' | 'rateLimits'>;
  /** Crypto RPC env shortcuts (RPC_UPSTREAM_*, price per credit); none and no `rpc` section: no network is served. */
  readonly rpc?: Config['rpc'];
  /** The zero-config chat upstream (OPENAI_COMPATIBLE_*). */
  readonly chatUpstream?: Config['chatUpstream'];
  /** Where upstream calls are counted (the app's Prometheus metrics). */
  readonly metrics?: UpstreamMetrics;
  /** Redis for pub/sub and the analytics cache (none: in-process). */
  readonly redisUrl?: Config['redisUrl'];
  readonly diemCutoverDate?: Config['diemCutoverDate'];
  /** Text parser pool sizing and budgets (none: the defaults). */
  readonly textParser?: Config['textParser'];
  /** Streamed answers' maximum duration (default 30 minutes). */
  readonly streams?: Config['streams'];
  /** Signed media URLs: secret, lifetime, public origin, sweep interval (none: the defaults). */
  readonly media?: Config['media'];
  readonly jobs?: Config['jobs'];
  readonly backgroundRemoval?: Config['backgroundRemoval'];
  /** Pictures worked on at once and libvips threads per picture (none: cores − 1, min 1). */
  readonly imageWork?: Config['imageWork'];
  /** Built-in speech calls in flight at most (none: 4 per eSpeak thread). */
  readonly speech?: Config['speech'];
  /** Wallet callers: sign-in rules, minimum balance, top-up settings (none: the defaults, no receiver). */
  readonly x402?: Config['x402'];
};

export interface BillingChoice extends BillingOptions {
  /** How many billing batches may run at once (batch-writer.ts; default 1). */
  readonly batchLanes?: number;
  /**
   * Balance leases (LAGOON_BALANCE_LEASES, leased-holds.ts): calls draw their holds in memory and their settlements
   * are written after the answer. Without it every call holds and settles in the database before it returns.
   */
  readonly leases?: LeaseOptions & {
    /** Asks other processes to give back unused leases on an account; resolves whether it is worth retrying. */
    readonly reclaimElsewhere?: (accountId: string) => Promise<boolean>;
    /** This process's name on its lease rows. */
    readonly holder?: string;
  };
}

/** The money core, wired: one batch writer under the holds this process uses, under the billing service. */
export function createBilling(deps: {
  db: Database;
  logger: Logger;
  options: BillingChoice;
  publisher?: UsagePublisher;
}): BillingService {
  const { db, logger, options, publisher } = deps;
  const writer = new BatchWriter({ db, logger, lanes: options.batchLanes });
  const perCall = new TransactionHolds({ db, writer, logger, publisher });
  const leases = options.leases;
  const holds = leases
    ? new LeasedHolds({
        writer,
        perCall,
        logger,
        publisher,
        options: leases,
        holder: leases.holder ?? randomUUID(),
        reclaimElsewhere: leases.reclaimElsewhere ?? (async () => false),
      })
    : perCall;
  return new BillingService({
    db,
    logger,
    holds,
    options: { reservationTimeoutMs: options.reservationTimeoutMs, walletMinimumBalance: options.walletMinimumBalance },
  });
}

/** Wires the domain services (no DI container: explicit constructor dependencies). */
export function createServices(db: Database, logger: Logger, options: ServiceOptions): Services {
  // Added in order of construction: stopped in reverse, so what a part uses is still open while it stops.
  const lifecycle = new Lifecycle(logger);
  const events = createEventBus({ redisUrl: options.redisUrl, logger });
  lifecycle.add('events', { stop: () => events.close() });
  const x402 = options.x402 ?? loadConfig({}).x402;
  const holder = randomUUID();
  const reclaim = new LeaseReclaim({ db, events, logger, holder });
  const billing = createBilling({
    db,
    logger,
    options: {
      reservationTimeoutMs: options.billing.reservationTimeoutMs,
      walletMinimumBalance: x402.minBalanceNano,
      ...(options.billing.balanceLeases && {
        leases: { ...DEFAULT_LEASE_OPTIONS, holder, reclaimElsewhere: reclaim.reclaimElsewhere },
      }),
    },
    publisher: new UsageEventPublisher({ events, logger }),
  });
  if (options.billing.balanceLeases) reclaim.listen(billing.holds);
  const cache = new KeyCache({
    ttlMs: options.auth.keyCacheTtlMs,
    channel: keyCacheChannel(events, logger),
    // An edited or revoked key's balance leases end, here and (through the channel) in every process.
    ...(options.billing.balanceLeases && { onKeyChanged: (keyId: string) => billing.holds.closeKey(keyId) }),
  });
  const lastUsed = new LastUsedTracker({ db, logger, intervalMs: options.auth.lastUsedFlushMs });
  const walletAuth = new WalletAuthenticator({ db, x402 });
  const auth = new AuthService({ db, cache, lastUsed, wallets: walletAuth });
  const apiKeys = new ApiKeyService({
    db,
    cache,
    lastUsed,
    maxKeysPerAccount: options.auth.maxKeysPerAccount,
    settled: billing,
  });
  const accounts = new AccountService({ db, apiKeys, billing });
  const catalog = new CatalogService({ db });
  const characters = new CharacterService({ db });
  const characterReviews = new CharacterReviewService({ db });
  const searchRoutes = buildSearchRoutes({
    providers: options.operatorConfig?.providers ?? [],
    mapping: options.operatorConfig?.search,
    env: options.search,
  });
  const search = new SearchService({ billing, router: new SearchRouter(searchRoutes), logger });
  const parser = options.textParser;
  const textParser = new TextParserService({
    billing,
    logger,
    ...(parser && {
      options: {
        perAccount: parser.perAccount,
        timeoutMs: parser.timeoutMs,
        queueTimeoutMs: parser.queueTimeoutMs,
        ...(parser.workers > 0 && { size: parser.workers }),
      },
    }),
  });
  const usage = new UsageService({
    db,
    events,
    logger,
    diemCutoverDate: options.diemCutoverDate ?? new Date('2025-01-01T00:00:00Z'),
    settled: billing,
  });
  const usageHistory = new UsageHistoryService({
    db,
    secret: instanceSecret(db, 'usage_history_cursor_secret'),
    settled: billing,
  });
  const analytics = new AnalyticsService({
    db,
    cache: createAnalyticsCache({ redisUrl: options.redisUrl, logger }),
    settled: billing,
  });
  const balance = new BalanceService({ db, billing });
  const chatGateway = new ChatGateway({
    // Without an operator config (tests wiring services directly) the built-in simulator still serves.
    providers: options.operatorConfig?.providers ?? [{ id: 'simulator', type: 'simulator' }],
    env: options.chatUpstream,
    logger,
    metrics: options.metrics,
  });
  const modelDiscovery = new ModelDiscovery({
    gateway: chatGateway,
    catalog,
    discovery: options.operatorConfig?.discovery,
    refreshMs: options.chatUpstream?.refreshMs ?? 0,
    logger,
  });
  const scraper = new WebScraper({
    settings: options.operatorConfig?.chat?.webScraping ?? WebScrapingConfigSchema.parse({}),
    readPage: (bytes, page) => textParser.readPage(bytes, page),
    logger,
  });
  const scrape = new ScrapeService({ billing, scraper, logger });
  const rateLimiter = createRateLimiter({
    db,
    logger,
    config: options.operatorConfig?.rateLimits,
    redisUrl: options.redisUrl,
  });
  lifecycle.add('rate limits', { stop: () => rateLimiter.close() });
  const rateLimits = new RateLimitService({ limiter: rateLimiter, catalog, billing });
  const chat = new ChatService({
    billing,
    rateLimiter,
    catalog,
    characters,
    search,
    scraper,
    upstreams: chatGateway,
    logger,
    settings: options.operatorConfig?.chat,
    maxStreamMs: options.streams?.maxDurationMs,
  });
  const responses = new ResponsesService({ db, chat, logger });
  const cryptoRpc = createCryptoRpc({
    db,
    billing,
    logger,
    operatorConfig: options.operatorConfig,
    env: options.rpc,
    redisUrl: options.redisUrl,
  });
  lifecycle.add('analytics cache', { stop: () => analytics.close() });
  lifecycle.add('text parser pool', { stop: () => textParser.close() });
  lifecycle.add('crypto RPC proxy', { stop: () => cryptoRpc.close() });
  lifecycle.add('chat upstreams', { stop: () => chatGateway.close() });
  lifecycle.add('chat', { stop: () => chat.close() });
  // One queue for every picture this process works on, so generation and edits together stay within it.
  const pixelWork = createPixelWork(imageThreads(options.imageWork?.threads));
  const { engines: imageEngines, ...images } = createImageServices({
    billing,
    catalog,
    logger,
    providers: options.operatorConfig?.providers,
    metrics: options.metrics,
    rateLimiter,
    pixelWork,
  });
  lifecycle.add('image engines', imageEngines);
  const imageEdit = createImageEditService({
    billing,
    catalog,
    logger,
    operatorConfig: options.operatorConfig,
    gateway: images.gateway,
    pixelWork,
  });
  lifecycle.add('image edit URL fetches', { stop: () => imageEdit.close() });
  const backgroundRemoval = createBackgroundRemovalService({
    billing,
    settings: options.backgroundRemoval,
    scraping: options.operatorConfig?.chat?.webScraping ?? WebScrapingConfigSchema.parse({}),
  });
  lifecycle.add('background removal URL fetches', { stop: () => backgroundRemoval.close() });
  const speech = createSpeechService({
    db,
    billing,
    catalog,
    logger,
    providers: options.operatorConfig?.providers,
    rateLimiter,
    maxCalls: options.speech?.maxCalls,
  });
  lifecycle.add('speech engines', { stop: () => speech.close() });
  const embeddings = new EmbeddingService({
    billing,
    catalog,
    gateway: new EmbeddingGateway(
      options.operatorConfig?.providers ?? [{ id: 'simulator', type: 'simulator' }],
      logger,
    ),
  });
  lifecycle.add('embedding engines', { stop: () => embeddings.close() });
  const transcription = new TranscriptionService({
    billing,
    catalog,
    gateway: new TranscriptionGateway(
      options.operatorConfig?.providers ?? [{ id: 'simulator', type: 'simulator' }],
      logger,
    ),
  });
  lifecycle.add('transcription engines', { stop: () => transcription.close() });
  // Pending charges are written and leases given back before the event bus and the database close.
  lifecycle.add('billing', { stop: () => billing.close() });
  lifecycle.add('model discovery', modelDiscovery);
  const { sweeper: mediaSweeper, ...media } = createMediaKit({ db, logger, options: options.media });
  // Added before everything that reads or writes media, so the store's connections close after all of them.
  lifecycle.add('media store', { stop: () => media.store.close() });
  lifecycle.add('media sweep', mediaSweeper);
  // Cloned voices' samples past their retention, on the media sweep's interval (a clone also clears its account's).
  lifecycle.add(
    'voice sweep',
    periodic(
      () => speech.sweepExpiredVoices(),
      options.media?.sweepIntervalMs ?? DEFAULT_MEDIA_SWEEP_MS,
      logger,
      'voice sweep',
    ),
  );
  const jobs = createJobServices(
    {
      db,
      billing,
      catalog,
      media: media.store,
      links: media.links,
      retentionSweepMs: options.media?.sweepIntervalMs,
      logger,
      events,
      providers: options.operatorConfig?.providers,
      options: options.jobs,
      webScraping: options.operatorConfig?.chat?.webScraping,
    },
    lifecycle,
  );
  const wallets = new WalletService({ db, billing, events, x402 });
  lifecycle.add(
    'sign-in nonce sweep',
    periodic(() => sweepNonces(db), options.billing.sweepIntervalMs, logger, 'sign-in nonce sweep'),
  );
  lifecycle.add('last-used flushes', lastUsed);
  // Top-ups tell walletBalance subscribers, like every other change of a wallet's credit.
  const topUps = new TopUpService({ db, logger, x402, onCredited: (accountId) => wallets.balanceChanged(accountId) });
  // A crash between an on-chain transfer and its credit is finished here (credited once, or marked failed).
  lifecycle.add('x402 top-up recovery', {
    start: () =>
      void topUps.recover().catch((error: unknown) => logger.error({ err: error }, 'x402 top-up recovery failed')),
  });
  // Settlements whose outcome was unknown (no receipt in time, a facilitator that did not answer) stay pending.
  lifecycle.add(
    'x402 top-up re-check',
    periodic(() => topUps.recover(), 60_000, logger, 'x402 top-up recovery'),
  );
  lifecycle.add(
    'reservation sweep',
    periodic(() => billing.sweepExpired(), options.billing.sweepIntervalMs, logger, 'reservation sweep'),
  );
  const web3Keys = new Web3KeyService({ db, apiKeys, secret: instanceSecret(db, 'web3_key_token_secret') });
  return {
    auth,
    apiKeys,
    web3Keys,
    accounts,
    billing,
    catalog,
    characters,
    characterReviews,
    lastUsed,
    search,
    scrape,
    textParser,
    usage,
    usageHistory,
    analytics,
    balance,
    events,
    chatGateway,
    modelDiscovery,
    chat,
    cryptoRpc,
    media,
    images,
    imageEdit,
    backgroundRemoval: backgroundRemoval.service,
    speech,
    embeddings,
    transcription,
    responses,
    jobs,
    rateLimiter,
    rateLimits,
    wallets,
    topUps,
    start: () => lifecycle.start(),
    stop: () => lifecycle.stop(),
  };
}
