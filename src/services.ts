import { randomUUID } from 'node:crypto';
import { AccountService } from './accounts/account.service.ts';
import { ScrapeService } from './augment/scrape.service.ts';
import { SearchService } from './augment/search.service.ts';
import { createTextParser } from './augment/text-parser.wiring.ts';
import { WebScraper } from './augment/scrape/web-scraper.ts';
import { ApiKeyService } from './auth/api-key.service.ts';
import { AuthService } from './auth/auth.service.ts';
import { KeyCache } from './auth/key-cache.ts';
import { keyCacheChannel, keyCacheSyncTiming } from './auth/key-cache-sync.ts';
import { LastUsedTracker } from './auth/last-used.ts';
import { AnalyticsService, createAnalyticsCache } from './billing/analytics.service.ts';
import { BalanceService } from './billing/balance.service.ts';
import type { BillingService } from './billing/billing.service.ts';
import { DEFAULT_LEASE_OPTIONS } from './billing/lease-options.ts';
import { LeaseReclaim } from './billing/lease-reclaim.ts';
import { UsageEventPublisher } from './billing/usage-events.ts';
import { UsageHistoryService } from './billing/usage-history.ts';
import { UsageService } from './billing/usage.service.ts';
import { CatalogService } from './catalog/catalog.service.ts';
import { CharacterService } from './characters/character.service.ts';
import { CharacterReviewService } from './characters/review.service.ts';
import { ChatService } from './chat/chat.service.ts';
import { createCryptoRpc } from './crypto-rpc/crypto-rpc.wiring.ts';
import type { Database } from './db/database.ts';
import { instanceSecret } from './instance-secret.ts';
import { Web3KeyService } from './auth/web3-keys.service.ts';
import { createEventBus } from './events/event-bus.ts';
import { Lifecycle, periodic } from './lifecycle.ts';
import type { Logger } from './logger.ts';
import { createMediaKit, DEFAULT_MEDIA_SWEEP_MS } from './media/media.wiring.ts';
import { createImageServices } from './media/images/image.wiring.ts';
import { createBackgroundRemovalService } from './media/images/background-removal.service.ts';
import { createImageEditService } from './media/images/image-edit.wiring.ts';
import { createPixelWork, imageThreads } from './media/images/pixel-work.ts';
import { createJobServices } from './media/jobs/job.wiring.ts';
import { EmbeddingService } from './embeddings/embedding.service.ts';
import { ResponsesService } from './responses/responses.service.ts';
import { TranscriptionService } from './media/transcription/transcription.service.ts';
import { TranscriptionGateway } from './providers/transcription/transcription-gateway.ts';
import { EmbeddingGateway } from './providers/embeddings/embedding-gateway.ts';
import { createSpeechService } from './media/speech/speech.wiring.ts';
import { BUILT_IN_PROVIDERS } from './operator-config/default-config.ts';
import { DEFAULT_WEB_SCRAPING } from './operator-config/chat-config.ts';
import { ChatGateway } from './providers/chat/chat-gateway.ts';
import { ModelDiscovery } from './providers/chat/model-discovery.ts';
import { buildSearchRoutes, SearchRouter } from './providers/search/search-routing.ts';
import { OperatorService } from './operator/operator.service.ts';
import { OperatorTokenService } from './operator/operator-tokens.ts';
import { UpstreamActivity } from './providers/upstream-activity.ts';
import { createRateLimiter } from './rate-limits/rate-limits.wiring.ts';
import { RateLimitService } from './rate-limits/rate-limit-status.ts';
import { SignInSite } from './wallets/sign-in-site.ts';
import { WalletAuthenticator } from './wallets/wallet-auth.ts';
import { createWalletServices } from './wallets/wallet.wiring.ts';
import { createWebhookEvents, createWebhooks, type WebhookEvents } from './webhooks/webhook.wiring.ts';

import type { ServiceOptions, Services } from './service-types.ts';

export type { BillingChoice, Operations, ServiceOptions, Services } from './service-types.ts';
export { createBilling } from './billing/billing-wiring.ts';
import { createBilling } from './billing/billing-wiring.ts';

/** What every part of the wiring shares: the lifecycle, the event bus, the money core and the rate limiter. */
interface Core {
  readonly db: Database;
  readonly logger: Logger;
  readonly options: ServiceOptions;
  readonly lifecycle: Lifecycle;
  readonly events: ReturnType<typeof createEventBus>;
  readonly billing: BillingService;
  readonly rateLimiter: ReturnType<typeof createRateLimiter>;
  readonly catalog: CatalogService;
  /** The providers every engine is built from; without an operator config (tests) the built-in simulator serves. */
  readonly providers: typeof BUILT_IN_PROVIDERS;
  readonly webScraping: typeof DEFAULT_WEB_SCRAPING;
  /** Every upstream pool reports here (and on to the app's metrics): the operator's health view reads it. */
  readonly upstreamActivity: UpstreamActivity;
  /** Spend-limit, balance and top-up webhook events, raised here and sent once webhooks are wired. */
  readonly webhookEvents: WebhookEvents;
}

/** Wires the domain services (no DI container: explicit constructor dependencies). */
export function createServices(db: Database, logger: Logger, options: ServiceOptions): Services {
  const core = createCore(db, logger, options);
  const { lifecycle, events, billing, rateLimiter, catalog } = core;
  const access = createAccess(core);
  const accounting = createAccounting(core);
  const chatStack = createChatStack(core);
  const mediaStack = createMediaStack(core);
  // Pending charges are written and leases given back before the event bus and the database close.
  lifecycle.add('billing', { stop: () => billing.close() });
  lifecycle.add('model discovery', chatStack.modelDiscovery);
  const { sweeper: mediaSweeper, ...media } = createMediaKit({ db, logger, options: options.media });
  // Added before everything that reads or writes media, so the store's connections close after all of them.
  lifecycle.add('media store', { stop: () => media.store.close() });
  lifecycle.add('media sweep', mediaSweeper);
  // Cloned voices' samples past their retention, on the media sweep's interval (a clone also clears its account's).
  lifecycle.add(
    'voice sweep',
    periodic(
      () => mediaStack.speech.sweepExpiredVoices(),
      options.media?.sweepIntervalMs ?? DEFAULT_MEDIA_SWEEP_MS,
      logger,
      'voice sweep',
    ),
  );
  // Before the jobs, which tell it when one ends; it sends on their queue's pg-boss once that is built.
  const { allowNetworks } = core.webScraping;
  const webhookDeps = { db, logger, options: options.webhooks, allowNetworks, events: core.webhookEvents };
  const boss = () => jobs.boss();
  const webhooks = createWebhooks({ ...webhookDeps, boss, workers: options.jobs?.workers ?? true }, lifecycle);
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
      rateLimiter,
      metrics: core.upstreamActivity,
      jobMetrics: options.metrics,
      webhooks,
    },
    lifecycle,
  );
  const walletParts = createWalletServices({
    ...core,
    x402: options.x402,
    site: access.signInSite,
    metrics: options.metrics,
    sweepIntervalMs: options.billing.sweepIntervalMs,
  });
  const operator = new OperatorService({
    db,
    accounts: access.services.accounts,
    billing,
    analytics: accounting.analytics,
    upstreams: core.upstreamActivity,
  });
  return {
    ...access.services,
    operator,
    ...accounting,
    ...chatStack,
    ...mediaStack,
    ...walletParts,
    billing,
    catalog,
    events,
    media,
    jobs: { service: jobs.service },
    webhooks: webhooks.service,
    rateLimiter,
    start: () => lifecycle.start(),
    stop: () => lifecycle.stop(),
  };
}

/** The parts everything else stands on; added to the lifecycle first, so they stop last. */
function createCore(db: Database, logger: Logger, options: ServiceOptions): Core {
  // Added in order of construction: stopped in reverse, so what a part uses is still open while it stops.
  const lifecycle = new Lifecycle(logger);
  const events = createEventBus({ redisUrl: options.redisUrl, logger, timeoutMs: options.redisTimeoutMs });
  lifecycle.add('events', { stop: () => events.close() });
  const holder = randomUUID();
  const inner = new UsageEventPublisher({ events, logger });
  const webhookEvents = createWebhookEvents({ db, logger, inner, balances: (id) => billing.balancesOf(id) });
  const reclaim = new LeaseReclaim({ db, events, logger, holder });
  const billing = createBilling({
    db,
    logger,
    options: {
      reservationTimeoutMs: options.billing.reservationTimeoutMs,
      walletMinimumBalance: options.x402.minBalanceNano,
      ...(options.billing.balanceLeases && {
        leases: { ...DEFAULT_LEASE_OPTIONS, holder, peers: reclaim },
      }),
    },
    publisher: webhookEvents.spendWatch,
    observers: { metrics: options.metrics, callLog: options.callLog },
  });
  // Every paid route admits its calls here first (src/rate-limits; the REST pipeline sends the windows).
  const rateLimiter = createRateLimiter({
    db,
    logger,
    config: options.operatorConfig?.rateLimits,
    redisUrl: options.redisUrl,
    redisTimeoutMs: options.redisTimeoutMs,
    metrics: options.metrics,
  });
  lifecycle.add('rate limits', { stop: () => rateLimiter.close() });
  const providers = options.operatorConfig?.providers ?? BUILT_IN_PROVIDERS;
  const webScraping = options.operatorConfig?.chat?.webScraping ?? DEFAULT_WEB_SCRAPING;
  const catalog = new CatalogService({ db });
  const upstreamActivity = new UpstreamActivity(options.metrics);
  upstreamActivity.known(providers.map((provider) => provider.id));
  const base = { db, logger, options, lifecycle, events, billing, rateLimiter, catalog };
  return { ...base, providers, webScraping, upstreamActivity, webhookEvents };
}

/** Who is calling: keys (cached, their last use tracked), wallets signing in, and the accounts they act for. */
function createAccess({ db, options, events, logger, billing, lifecycle }: Core) {
  const cache = new KeyCache({
    ttlMs: options.auth.keyCacheTtlMs,
    channel: keyCacheChannel(events, logger, keyCacheSyncTiming(options.redisTimeoutMs)),
    // An edited or revoked key's balance leases end, here and (through the channel) in every process.
    ...(options.billing.balanceLeases && { onKeyChanged: (keyId: string) => billing.holds.closeKey(keyId) }),
  });
  const lastUsed = new LastUsedTracker({ db, logger, intervalMs: options.auth.lastUsedFlushMs });
  lifecycle.add('last-used flushes', lastUsed);
  const signInSite = new SignInSite({
    siweDomains: options.x402.siweDomains,
    publicUrl: options.media?.publicUrl,
    listen: options.http,
  });
  const walletAuth = new WalletAuthenticator({ db, x402: options.x402, site: signInSite });
  const operatorTokens = new OperatorTokenService({ db });
  const auth = new AuthService({ db, cache, lastUsed, wallets: walletAuth, operatorTokens });
  const apiKeys = new ApiKeyService({
    db,
    cache,
    lastUsed,
    maxKeysPerAccount: options.auth.maxKeysPerAccount,
    settled: billing,
  });
  const accounts = new AccountService({ db, apiKeys, billing });
  const web3Keys = new Web3KeyService({ db, apiKeys, secret: instanceSecret(db, 'web3_key_token_secret') });
  return { services: { auth, apiKeys, accounts, web3Keys, operatorTokens, lastUsed, signInSite }, signInSite };
}

/** What was spent: usage, its history and analytics, balances. */
function createAccounting({ db, options, events, logger, billing, lifecycle }: Core) {
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
    cache: createAnalyticsCache({ redisUrl: options.redisUrl, redisTimeoutMs: options.redisTimeoutMs, logger }),
    settled: billing,
  });
  lifecycle.add('analytics cache', { stop: () => analytics.close() });
  // Holds whose caller never settled nor released them (a crashed process) run out and are given back.
  lifecycle.add(
    'reservation sweep',
    periodic(() => billing.sweepExpired(), options.billing.sweepIntervalMs, logger, 'reservation sweep'),
  );
  const balance = new BalanceService({ db, billing });
  return { usage, usageHistory, analytics, balance };
}

/** Chat and what it draws on (characters, search, scraping, files), the Responses API and the crypto RPC proxy. */
function createChatStack(core: Core) {
  const { db, options, logger, billing, rateLimiter, catalog, lifecycle } = core;
  const characters = new CharacterService({ db });
  const characterReviews = new CharacterReviewService({ db });
  const searchRoutes = buildSearchRoutes({
    providers: options.operatorConfig?.providers ?? [],
    mapping: options.operatorConfig?.search,
  });
  const search = new SearchService({ billing, router: new SearchRouter(searchRoutes), logger, rateLimiter });
  const textParser = createTextParser({ billing, logger, rateLimiter, settings: options.textParser });
  const chatGateway = new ChatGateway({ providers: core.providers, logger, metrics: core.upstreamActivity });
  const modelDiscovery = new ModelDiscovery({
    gateway: chatGateway,
    catalog,
    discovery: options.operatorConfig?.discovery,
    refreshMs: options.chatUpstream?.refreshMs ?? 0,
    logger,
  });
  const scraper = new WebScraper({
    settings: core.webScraping,
    readPage: (bytes, page) => textParser.readPage(bytes, page),
    logger,
  });
  const scrape = new ScrapeService({ billing, scraper, logger, rateLimiter });
  const rateLimits = new RateLimitService({ limiter: rateLimiter, catalog, billing });
  const chat = new ChatService({
    billing,
    rateLimiter,
    catalog,
    characters,
    search,
    scraper,
    files: textParser,
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
    redisTimeoutMs: options.redisTimeoutMs,
  });
  lifecycle.add('text parser pool', { stop: () => textParser.close() });
  lifecycle.add('crypto RPC proxy', { stop: () => cryptoRpc.close() });
  lifecycle.add('chat upstreams', { stop: () => chatGateway.close() });
  lifecycle.add('chat', { stop: () => chat.close() });
  const chatParts = { characters, characterReviews, search, scrape, textParser, chatGateway, modelDiscovery, chat };
  return { ...chatParts, rateLimits, responses, cryptoRpc };
}

/** Pictures (generation, edits, background removal), speech, embeddings and transcription. */
function createMediaStack(core: Core) {
  const { db, options, logger, billing, rateLimiter, catalog, lifecycle, providers } = core;
  // One queue for every picture this process works on, so generation and edits together stay within it.
  const pixelWork = createPixelWork(imageThreads(options.imageWork?.threads), options.imageWork?.priority, logger);
  const { engines: imageEngines, ...images } = createImageServices({
    billing,
    catalog,
    logger,
    providers: options.operatorConfig?.providers,
    metrics: core.upstreamActivity,
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
    rateLimiter,
    maxInputTotalPixels: options.imageWork?.maxInputTotalPixels,
  });
  lifecycle.add('image edit URL fetches', { stop: () => imageEdit.close() });
  const backgroundRemoval = createBackgroundRemovalService({
    billing,
    settings: options.backgroundRemoval,
    scraping: core.webScraping,
    rateLimiter,
    maxInputTotalPixels: options.imageWork?.maxInputTotalPixels,
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
    metrics: core.upstreamActivity,
  });
  lifecycle.add('speech engines', { stop: () => speech.close() });
  const embeddingGateway = new EmbeddingGateway(providers, logger, core.upstreamActivity);
  const embeddings = new EmbeddingService({ billing, catalog, logger, rateLimiter, gateway: embeddingGateway });
  lifecycle.add('embedding engines', { stop: () => embeddings.close() });
  const transcriptionGateway = new TranscriptionGateway(providers, logger, core.upstreamActivity);
  const transcription = new TranscriptionService({ billing, catalog, rateLimiter, gateway: transcriptionGateway });
  lifecycle.add('transcription engines', { stop: () => transcription.close() });
  const pictures = { images, imageEdit, backgroundRemoval: backgroundRemoval.service };
  return { ...pictures, speech, embeddings, transcription };
}
