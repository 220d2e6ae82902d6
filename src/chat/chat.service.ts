import { randomBytes } from 'node:crypto';
import { SEARCH_NOT_CONFIGURED, type SearchService } from '../augment/search.service.ts';
import { SEARCH_QUERY_MAX_CHARS } from '../augment/search.inputs.ts';
import type { ScrapedPage, WebScraper } from '../augment/scrape/web-scraper.ts';
import { followAbort } from '../abort.ts';
import type { AccountAuthContext, AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { Price } from '../billing/billing.types.ts';
import type { CatalogService } from '../catalog/catalog.service.ts';
import type { CatalogModel } from '../catalog/model.ts';
import type { CharacterService } from '../characters/character.service.ts';
import { UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ChatCallOptions, UpstreamChatCompletion } from '../providers/chat/chat-engine.ts';
import { parseInput } from '../validation.ts';
import {
  applyImageRules,
  checkAudioVideoParts,
  lastUserText,
  pageCitations,
  sourcesContext,
  toUpstreamMessages,
  withSystemPreamble,
} from './chat-messages.ts';
import { inlineFiles, NO_FILES, type FileTextExtractor } from './chat-files.ts';
import { billedTokens, chatPrices, maxChatCost, settleChat, type BilledTokens } from './chat-pricing.ts';
import {
  effectiveSettings,
  planUpstream,
  stripThinking,
  type EffectiveSettings,
  type UpstreamPlan,
} from './chat-request.ts';
import { ChatStreamSession, DOCUMENTS_TOOL, hasSources, toUsage } from './chat-stream.ts';
import { limitCompletion, StreamOutputLimit } from './output-limit.ts';
import type { ChatUpstreams, UpstreamBody } from './chat-upstream.ts';
import { ChatCompletionInput, type ChatMessageInput } from './chat.inputs.ts';
import type { ChatChoice, ChatCompletion, ChatCompletionResult, WebCitation } from './chat.types.ts';
import { parseModelName, resolveChatModel } from './model-resolution.ts';
import type { Admission, RateLimiter } from '../rate-limits/rate-limiter.ts';
import { countPromptTokens } from './token-count.ts';

/** Operator settings of chat (the operator config's `chat` section). */
export interface ChatSettings {
  /** Prepended to every conversation unless the request sets include_venice_system_prompt: false. */
  readonly systemPrompt?: string | undefined;
}

export interface ChatCallerOptions {
  /** The caller went away: aborts the upstream call (and, for a stream, settles what was delivered). */
  readonly signal?: AbortSignal | undefined;
}

/** Room held for search results in the prompt estimate (ten snippets and their headers). */
const SEARCH_CONTEXT_TOKENS = 4_000;
/** Room held for each scraped page's header (number, title, URL) besides its text. */
const PAGE_HEADER_TOKENS = 200;

/** A call checked, planned and admitted, before anything is held. */
interface Planned {
  readonly auth: AccountAuthContext;
  readonly model: CatalogModel;
  readonly settings: EffectiveSettings;
  readonly plan: UpstreamPlan;
  readonly messages: readonly ChatMessageInput[];
  readonly preamble: readonly string[];
  readonly promptMessages: UpstreamBody['messages'];
  readonly query: string | undefined;
  readonly pageUrls: readonly string[];
  readonly pageTokens: number;
  /** File parts whose text was extracted (each priced as a text parser request). */
  readonly files: number;
  /** The worst case, held for the call. */
  readonly maxCost: Price;
  /** The rate-limit windows this call was admitted in (undefined without a limiter). */
  readonly admission: Admission | undefined;
}

/** A held call with its sources read and its upstream body built. */
interface Prepared extends Planned {
  readonly body: UpstreamBody;
  readonly citations: readonly WebCitation[];
  readonly searched: boolean;
  readonly callOptions: ChatCallOptions;
}

/**
 * Chat completions: validates the request, resolves model, character and features, holds the worst-case cost,
 * runs the web search when asked, calls the model through the chat gateway and settles on the tokens used.
 * Talks to the catalog, characters, search and billing services and the chat upstreams.
 */
export class ChatService {
  /** The streams being served, so that a shutdown ends each one properly (endStreams). */
  private readonly open = new Set<ChatStreamSession>();
  private shuttingDown = false;

  constructor(
    private readonly deps: {
      billing: BillingService;
      /** Per-key rate limits (none: unlimited, as in tests that wire the service alone). */
      rateLimiter?: RateLimiter | undefined;
      catalog: CatalogService;
      characters: CharacterService;
      search: SearchService;
      scraper: WebScraper;
      /** Reads the text of file parts (the text parser); without it, file parts are refused. */
      files?: FileTextExtractor | undefined;
      upstreams: ChatUpstreams;
      logger: Logger;
      settings?: ChatSettings | undefined;
      /** A stream's maximum duration (default 30 minutes). */
      maxStreamMs?: number | undefined;
    },
  ) {}

  /** POST /chat/completions: a finished completion, or with `stream: true` a started stream. */
  async create(
    auth: AuthContext,
    input: unknown,
    options: ChatCallerOptions = {},
  ): Promise<{ stream: false; result: ChatCompletionResult } | { stream: true; session: ChatStreamSession }> {
    const request = parseInput(ChatCompletionInput, input);
    if (request.stream) return { stream: true, session: await this.startStream(auth, request, options) };
    return { stream: false, result: await this.runCompletion(auth, request, options) };
  }

  /** A non-streaming completion whatever the input's `stream` says (GraphQL mutation). */
  async complete(auth: AuthContext, input: unknown, options: ChatCallerOptions = {}): Promise<ChatCompletionResult> {
    return this.runCompletion(auth, { ...parseInput(ChatCompletionInput, input), stream: false }, options);
  }

  /** A streaming completion whatever the input's `stream` says (GraphQL subscription). */
  async stream(auth: AuthContext, input: unknown, options: ChatCallerOptions = {}): Promise<ChatStreamSession> {
    return this.startStream(auth, { ...parseInput(ChatCompletionInput, input), stream: true }, options);
  }

  private async runCompletion(
    auth: AuthContext,
    input: ChatCompletionInput,
    options: ChatCallerOptions,
  ): Promise<ChatCompletionResult> {
    const planned = await this.plan(auth, input);
    // Anything that throws below (the sources, the upstream, a timeout) releases the hold: nothing is charged.
    return this.deps.billing.paidCall(planned.auth, planned.maxCost, async (call) => {
      const prepared = await this.gather(planned, options.signal);
      const startedAt = performance.now();
      const answered = await this.deps.upstreams.complete(
        prepared.model.providers,
        prepared.body,
        prepared.callOptions,
      );
      const reported = await billedTokens(answered.completion, prepared.body);
      // An upstream that ignored max_completion_tokens: the answer is cut there and billed for the limit at most.
      const limited = limitCompletion(answered.completion, prepared.plan.maxOutputTokens, reported.completionTokens);
      const tokens: BilledTokens = { ...reported, completionTokens: limited.completionTokens };
      const charge = await settleChat(call, { ...prepared, startedAt, providerId: answered.providerId }, tokens, {
        notes: 'Chat completion',
        logger: this.deps.logger,
      });
      return {
        completion: this.toCompletion(prepared, limited.completion, tokens),
        charge,
      };
    });
  }

  private async startStream(
    auth: AuthContext,
    input: ChatCompletionInput,
    options: ChatCallerOptions,
  ): Promise<ChatStreamSession> {
    // One controller for the search, the upstream call and the session (which cancels itself when it aborts).
    const controller = new AbortController();
    const detach = followAbort(options.signal, controller);
    try {
      const planned = await this.plan(auth, input);
      // Until the session owns the call, anything that throws (an upstream error or timeout before the first byte)
      // releases the hold: nothing is charged.
      return await this.deps.billing.paidCall(planned.auth, planned.maxCost, async (call) => {
        const prepared = await this.gather(planned, controller.signal);
        const startedAt = performance.now();
        const started = await this.deps.upstreams.stream(prepared.model.providers, prepared.body, prepared.callOptions);
        const session: ChatStreamSession = new ChatStreamSession({
          ...prepared,
          call: call.handOff(),
          upstream: started.stream,
          providerId: started.providerId,
          outputLimit: new StreamOutputLimit(prepared.plan.maxOutputTokens, prepared.plan.choices),
          controller,
          id: completionId(),
          created: Math.floor(Date.now() / 1000),
          startedAt,
          maxDurationMs: this.deps.maxStreamMs ?? DEFAULT_MAX_STREAM_MS,
          logger: this.deps.logger,
          onSettled: () => this.open.delete(session),
        });
        this.open.add(session);
        // Started while the server shuts down (its upstream answered after endStreams): ended the same way at once.
        if (this.shuttingDown) void session.shutDown();
        return session;
      });
    } catch (error) {
      detach();
      throw error;
    }
  }

  /** Everything before the hold: checks, model, features, the prompt estimate and the worst case; the rate limit. */
  private async plan(auth: AuthContext, input: ChatCompletionInput): Promise<Planned> {
    const account = requireAccount(auth);
    const { name, suffix } = parseModelName(input.model);
    const requested = { ...input.service_parameters, ...suffix };
    const settings = effectiveSettings(requested, { webScraping: this.deps.scraper.enabled });
    const { model, character } = await resolveChatModel(this.deps, account, name, requested.character_slug);
    if (!model.providers.some((binding) => this.deps.upstreams.has(binding.providerId))) {
      throw new UpstreamError(`Model ${model.id} has no configured provider`, 'MODEL_OFFLINE');
    }
    const plan = planUpstream(input, model, settings);
    checkAudioVideoParts(input.messages, model.spec.capabilities, model.id);
    const withImages = applyImageRules(input.messages, model.spec.capabilities, model.id);
    const preamble: string[] = [];
    const systemPrompt = this.deps.settings?.systemPrompt;
    if (settings.include_venice_system_prompt && systemPrompt) preamble.push(systemPrompt);
    if (character) preamble.push(character.systemPrompt);
    // The search query and linked pages come from what the caller typed, not from the text of attached files.
    const query = this.searchQuery(settings, model, withImages);
    const pageUrls = settings.enable_web_scraping ? this.deps.scraper.urlsIn(lastUserText(withImages)) : [];
    const pageTokens = this.deps.scraper.pageTokens(plan.contextLength, pageUrls.length);
    const { messages, files } = await inlineFiles(withImages, this.deps.files ?? NO_FILES, account.accountId);

    const promptMessages = toUpstreamMessages(withSystemPreamble(messages, preamble));
    const estimate = await countPromptTokens({ ...plan.body, messages: promptMessages });
    const maxCost = maxChatCost(chatPrices(model), {
      promptEstimate:
        estimate +
        (query === undefined ? 0 : SEARCH_CONTEXT_TOKENS) +
        pageUrls.length * (pageTokens + PAGE_HEADER_TOKENS),
      maxOutputTokens: plan.maxOutputTokens,
      choices: plan.choices,
      webSearch: query !== undefined,
      files,
    });
    // Counted before anything is held: a refused call (429) is never charged.
    const admission = await this.deps.rateLimiter?.admit(account, model, estimate);
    const base = { auth: account, model, settings, plan, messages, preamble, promptMessages, query };
    return { ...base, pageUrls, pageTokens, files, maxCost, admission };
  }

  /** Once held: the search and the linked pages, and the upstream body with them. */
  private async gather(planned: Planned, signal: AbortSignal | undefined): Promise<Prepared> {
    const { auth, query, pageUrls, settings, messages, preamble, plan } = planned;
    // The search and the pages are fetched side by side; either may come back empty.
    const [found, pages] = await Promise.all([
      query === undefined ? undefined : this.webSearch(auth, query, signal),
      pageUrls.length === 0
        ? ([] as ScrapedPage[])
        : this.deps.scraper.scrape(auth.requestId, [...pageUrls], planned.pageTokens, signal),
    ]);
    const searched = found !== undefined;
    const results = found ?? [];
    const citations = [...results, ...pageCitations(pages, results.length)];
    const upstreamMessages =
      citations.length === 0
        ? planned.promptMessages
        : toUpstreamMessages(
            withSystemPreamble(messages, [
              ...preamble,
              sourcesContext({ query, results, pages, cite: settings.enable_web_citations }),
            ]),
          );
    const body = { ...plan.body, messages: upstreamMessages };
    const callOptions: ChatCallOptions = {
      signal,
      requestId: auth.requestId,
      splitThinkTags: plan.splitThinkTags,
      reasoning: plan.reasoning,
    };
    return { ...planned, body, citations, searched, callOptions };
  }

  /** `on` always searches (503 when no search upstream is configured); `auto` searches for web-search models. */
  private searchQuery(
    settings: EffectiveSettings,
    model: CatalogModel,
    messages: readonly ChatMessageInput[],
  ): string | undefined {
    const mode = settings.enable_web_search;
    if (mode === 'off') return undefined;
    const configured = this.deps.search.serves();
    if (mode === 'on' && !configured) throw new UpstreamError(SEARCH_NOT_CONFIGURED, 'SERVICE_UNAVAILABLE');
    if (mode === 'auto' && (!configured || !model.spec.capabilities?.supportsWebSearch)) return undefined;
    const query = [...lastUserText(messages).trim().replace(/\s+/g, ' ')]
      .slice(0, SEARCH_QUERY_MAX_CHARS)
      .join('')
      .trim();
    return query === '' ? undefined : query;
  }

  /** The search results numbered for citation, or undefined when the search failed (the answer goes on without). */
  private async webSearch(
    auth: AccountAuthContext,
    query: string,
    signal: AbortSignal | undefined,
  ): Promise<WebCitation[] | undefined> {
    try {
      const { results } = await this.deps.search.searchUnmetered(auth, { query }, { signal });
      return results.map((result, index) => ({
        index: index + 1,
        title: result.title,
        url: result.url,
        content: result.content,
        date: result.date,
      }));
    } catch (error) {
      if (signal?.aborted) throw error;
      this.deps.logger.warn({ reqId: auth.requestId, err: error }, 'chat web search failed; answering without it');
      return undefined;
    }
  }

  private toCompletion(prepared: Prepared, completion: UpstreamChatCompletion, tokens: BilledTokens): ChatCompletion {
    const { settings, citations } = prepared;
    const strip = settings.strip_thinking_response;
    const documents =
      hasSources(prepared) && settings.return_search_results_as_documents
        ? [
            {
              id: DOCUMENTS_TOOL,
              type: 'function' as const,
              function: { name: DOCUMENTS_TOOL, arguments: JSON.stringify({ documents: citations }) },
            },
          ]
        : [];
    const choices = completion.choices.map((choice): ChatChoice => ({
      index: choice.index,
      message: {
        role: 'assistant',
        content: strip ? stripThinking(choice.message.content) : choice.message.content,
        reasoning_content: strip ? null : choice.message.reasoning_content,
        tool_calls: [...choice.message.tool_calls, ...documents],
      },
      finish_reason: choice.finish_reason,
      stop_reason: choice.stop_reason,
      logprobs: prepared.plan.includeLogprobs ? choice.logprobs : null,
    }));
    return {
      id: completionId(),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: prepared.model.id,
      choices,
      usage: toUsage(tokens),
      prompt_logprobs: null,
      service_parameters: { ...settings, web_search_citations: citations },
    };
  }

  /**
   * Server shutdown, at the end of the drain time: every stream still open (REST, Responses, the GraphQL
   * subscription) is ended with a SERVER_SHUTTING_DOWN error as its last event and charged for what it delivered,
   * rather than cut off like a client that went away. Resolves once each is settled.
   */
  async endStreams(): Promise<void> {
    this.shuttingDown = true;
    if (this.open.size === 0) return;
    this.deps.logger.warn({ streams: this.open.size }, 'ending the streams still open: the server is shutting down');
    await Promise.all([...this.open].map((session) => session.shutDown()));
  }

  /** Stops the scraper's connections. */
  close(): Promise<void> {
    return this.deps.scraper.close();
  }
}

const DEFAULT_MAX_STREAM_MS = 30 * 60_000;

/**
 * Our own completion id, random and unique per completion: a caller's X-Request-ID is chosen by the caller (and
 * may repeat), so it must not name the completion. The request id stays in X-Request-ID and the usage entry.
 */
const completionId = () => `chatcmpl-${randomBytes(16).toString('hex')}`;
