import { AUGMENT_PRICE, AUGMENT_PRICE_USD } from '../augment/pricing.ts';
import {
  priceIn,
  type Price,
  type Reservation,
  type SettledCharge,
  type Usage,
  type UsageLine,
} from '../billing/billing.types.ts';
import { ATTO_DIGITS, costNano, formatScaled, type Atto } from '../billing/money.ts';
import type { PaidCall } from '../billing/paid-call.ts';
import { attoPrice, textPrices, type AttoPrice, type CatalogModel } from '../catalog/model.ts';
import type { Logger } from '../logger.ts';
import type { TextPricing } from '../operator-config/schema.ts';
import type { Admission } from '../rate-limits/rate-limiter.ts';
import type { UpstreamChatCompletion } from '../providers/chat/chat-engine.ts';
import type { UpstreamBody } from './chat-upstream.ts';
import { countOutputTokens, countPromptTokens } from './token-count.ts';

/*
 * Chat prices: per 1M input / output tokens from the model's pricing (cache-read input when the upstream
 * reports cached tokens; the `extended` tier when the prompt is longer than its threshold), exact in bigint.
 */

const PER_MILLION = 1_000_000n;

interface Tier {
  readonly input: AttoPrice;
  readonly output: AttoPrice;
  /** Cached prompt tokens; the input price when the model has no cache price. */
  readonly cacheRead: AttoPrice;
}

export interface ChatPrices {
  readonly standard: Tier;
  readonly extended: (Tier & { readonly threshold: number }) | undefined;
}

const cache = new WeakMap<CatalogModel, ChatPrices>();

/** The model's token prices, parsed once per catalog snapshot (snapshot models are frozen and shared). */
export function chatPrices(model: CatalogModel): ChatPrices {
  let prices = cache.get(model);
  if (!prices) {
    const base = textPrices(model);
    const extended = (model.spec.pricing as TextPricing).extended;
    prices = {
      standard: { input: base.input, output: base.output, cacheRead: base.cacheInput ?? base.input },
      extended: extended && {
        threshold: extended.context_token_threshold,
        input: attoPrice(extended.input),
        output: attoPrice(extended.output),
        cacheRead: attoPrice(extended.cache_input ?? extended.input),
      },
    };
    cache.set(model, prices);
  }
  return prices;
}

const tierFor = (prices: ChatPrices, promptTokens: number): Tier =>
  prices.extended && promptTokens > prices.extended.threshold ? prices.extended : prices.standard;

const maxAtto = (...values: Atto[]): Atto => values.reduce((a, b) => (a > b ? a : b), 0n);
const tokensCost = (tokens: number, price: AttoPrice): Price => ({
  usd: costNano(BigInt(tokens), price.usd, PER_MILLION),
  diem: costNano(BigInt(tokens), price.diem, PER_MILLION),
});
const addPrices = (...prices: Price[]): Price =>
  prices.reduce((sum, p) => ({ usd: sum.usd + p.usd, diem: sum.diem + p.diem }), { usd: 0n, diem: 0n });

/** Reservation headroom over the o200k prompt estimate: upstream tokenizers and chat templates count differently. */
export const reservedPromptTokens = (estimate: number): number => Math.ceil((estimate * 5) / 4) + 32;

/**
 * The most a call can cost: every choice reading the whole prompt and writing `maxOutputTokens`, at the highest
 * price of any tier (the upstream's prompt count may cross the extended threshold the estimate did not), plus
 * the web search price when a search will run and the text parser price of each attached file.
 */
export function maxChatCost(
  prices: ChatPrices,
  input: { promptEstimate: number; maxOutputTokens: number; choices: number; webSearch: boolean; files?: number },
): Price {
  const tiers = prices.extended ? [prices.standard, prices.extended] : [prices.standard];
  const worstIn: AttoPrice = {
    usd: maxAtto(...tiers.flatMap((t) => [t.input.usd, t.cacheRead.usd])),
    diem: maxAtto(...tiers.flatMap((t) => [t.input.diem, t.cacheRead.diem])),
  };
  const worstOut: AttoPrice = {
    usd: maxAtto(...tiers.map((t) => t.output.usd)),
    diem: maxAtto(...tiers.map((t) => t.output.diem)),
  };
  return addPrices(
    tokensCost(reservedPromptTokens(input.promptEstimate) * input.choices, worstIn),
    tokensCost(input.maxOutputTokens * input.choices, worstOut),
    input.webSearch ? AUGMENT_PRICE : { usd: 0n, diem: 0n },
    filesCost(input.files ?? 0),
  );
}

/** Each attached file is one text parser request, at the price of POST /augment/text-parser. */
const filesCost = (files: number): Price => ({
  usd: AUGMENT_PRICE.usd * BigInt(files),
  diem: AUGMENT_PRICE.diem * BigInt(files),
});

export interface BilledTokens {
  /** All prompt tokens, cached ones included. */
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** Across every choice. */
  readonly completionTokens: number;
}

/** USD per token as an exact decimal (the price is per 1M tokens, so six more decimal places). */
const perTokenUsd = (price: AttoPrice): string => formatScaled(price.usd, ATTO_DIGITS + 6);

function tokenLine(
  model: CatalogModel,
  kind: 'input' | 'cache-read' | 'output',
  lineType: string,
  tokens: number,
  price: AttoPrice,
): UsageLine {
  return {
    sku: `${model.id}-llm-${kind}-mtoken`,
    lineType,
    units: String(tokens),
    pricePerUnitUsd: perTokenUsd(price),
    cost: tokensCost(tokens, price),
  };
}

/**
 * The usage record of one chat call: Input (uncached prompt tokens), Cache Read (when any), Output, the web
 * search request when one ran, and the text parser requests of attached files. Its token counts are the ones the
 * response's `usage` shows.
 */
export function chatUsage(
  model: CatalogModel,
  tokens: BilledTokens,
  details: { requestId: string; executionTimeMs: number; webSearch: boolean; files?: number; notes: string },
): Usage {
  const tier = tierFor(chatPrices(model), tokens.promptTokens);
  const cached = Math.min(tokens.cachedTokens, tokens.promptTokens);
  const lines: UsageLine[] = [tokenLine(model, 'input', 'Input', tokens.promptTokens - cached, tier.input)];
  if (cached > 0) lines.push(tokenLine(model, 'cache-read', 'Cache Read', cached, tier.cacheRead));
  lines.push(tokenLine(model, 'output', 'Output', tokens.completionTokens, tier.output));
  if (details.webSearch)
    lines.push({
      sku: 'augment-web-search',
      lineType: 'Web Search',
      units: '1',
      pricePerUnitUsd: AUGMENT_PRICE_USD,
      cost: AUGMENT_PRICE,
    });
  const files = details.files ?? 0;
  if (files > 0)
    lines.push({
      sku: 'augment-text-parser',
      lineType: 'Text Parser',
      units: String(files),
      pricePerUnitUsd: AUGMENT_PRICE_USD,
      cost: filesCost(files),
    });
  return {
    modelId: model.id,
    modelType: 'LLM',
    unitType: 'tokens',
    notes: details.notes,
    lines,
    inferenceDetails: {
      requestId: details.requestId,
      inferenceExecutionTime: details.executionTimeMs,
      promptTokens: tokens.promptTokens,
      completionTokens: tokens.completionTokens,
    },
  };
}

/**
 * Whether a usage record costs more than its hold (the upstream counted far more prompt tokens than the
 * estimate): billing then caps the charge at the hold, so the caller pays less than price × tokens.
 */
export function exceedsHold(usage: Usage, reservation: Reservation): boolean {
  const total = usage.lines.reduce((sum, line) => sum + priceIn(line.cost, reservation.currency), 0n);
  return total > reservation.amount;
}

/** What a chat call's settlement needs to know of the call. */
export interface ChatCharge {
  readonly auth: { readonly requestId: string };
  readonly model: CatalogModel;
  readonly searched: boolean;
  /** File parts whose text was extracted (each priced as a text parser request). */
  readonly files: number;
  /** The rate-limit windows the call was admitted in; its completion tokens are counted there. */
  readonly admission?: Pick<Admission, 'recordTokens'> | undefined;
  readonly startedAt: number;
  /** The provider that answered. */
  readonly providerId?: string | undefined;
}

/**
 * The one chat settlement, for completions and streams alike: the usage of the tokens billed (a warning when it
 * costs more than the hold, which caps the charge), the completion tokens counted in the rate-limit window, then
 * the charge.
 */
export function settleChat(
  call: PaidCall,
  chat: ChatCharge,
  tokens: BilledTokens,
  details: { notes: string; logger: Pick<Logger, 'warn'> },
): Promise<SettledCharge> {
  let usage = chatUsage(chat.model, tokens, {
    requestId: chat.auth.requestId,
    executionTimeMs: Math.round(performance.now() - chat.startedAt),
    webSearch: chat.searched,
    files: chat.files,
    notes: details.notes,
  });
  if (chat.providerId !== undefined) usage = { ...usage, providerId: chat.providerId };
  if (exceedsHold(usage, call.reservation))
    details.logger.warn(
      { reqId: chat.auth.requestId, model: chat.model.id },
      'chat usage exceeds its hold; the charge is capped at the hold',
    );
  chat.admission?.recordTokens(tokens.completionTokens);
  return call.settle(usage);
}

/** The upstream's usage, or a tokenizer count of the prompt and of every choice's output when it reported none. */
export async function billedTokens(completion: UpstreamChatCompletion, body: UpstreamBody): Promise<BilledTokens> {
  if (completion.usage) {
    return {
      promptTokens: completion.usage.prompt_tokens,
      cachedTokens: completion.usage.cached_tokens,
      completionTokens: completion.usage.completion_tokens,
    };
  }
  const outputs = completion.choices.map(({ message }) => {
    const calls = message.tool_calls.map((call) => call.function.name + call.function.arguments).join('');
    return (message.reasoning_content ?? '') + (message.content ?? '') + calls;
  });
  return {
    promptTokens: await countPromptTokens(body),
    cachedTokens: 0,
    completionTokens: await countOutputTokens(outputs),
  };
}
