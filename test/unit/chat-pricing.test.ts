import { describe, expect, it } from 'vitest';
import { AUGMENT_PRICE } from '../../src/augment/pricing.ts';
import { chatPrices, chatUsage, maxChatCost, reservedPromptTokens } from '../../src/chat/chat-pricing.ts';
import { textModel } from '../helpers/fakes.ts';

/*
 * Chat prices on in-memory models: the tiers, cache reads and the reservation bound that HTTP tests see only as
 * a balance after a whole completion. Prices are per 1M tokens; 1 USD = 1e9 nano.
 */

const details = { requestId: 'req-1', executionTimeMs: 10, webSearch: false, notes: 'Chat completion' };
const lineOf = (usage: ReturnType<typeof chatUsage>, lineType: string) =>
  usage.lines.find((line) => line.lineType === lineType);

describe('chat pricing', () => {
  const chat = textModel('chat', { input: '0.7', output: '2.8', cacheInput: '0.35' });
  const think = textModel('think', {
    input: '1.1',
    output: '4.4',
    extended: { threshold: 100, input: '2.2', output: '8.8' },
  });

  it('should charge Input and Output lines exactly, per token, in both currencies', () => {
    const usage = chatUsage(chat, { promptTokens: 1_000, cachedTokens: 0, completionTokens: 250 }, details);
    expect(usage.lines.map((line) => [line.lineType, line.sku, line.units])).toEqual([
      ['Input', 'chat-llm-input-mtoken', '1000'],
      ['Output', 'chat-llm-output-mtoken', '250'],
    ]);
    expect(lineOf(usage, 'Input')?.cost).toEqual({ usd: 700_000n, diem: 700_000n }); // 1000 × 0.7 / 1M USD
    expect(lineOf(usage, 'Output')?.cost).toEqual({ usd: 700_000n, diem: 700_000n }); // 250 × 2.8 / 1M USD
    expect(lineOf(usage, 'Input')?.pricePerUnitUsd).toBe('0.0000007');
    expect(usage).toMatchObject({ modelId: 'chat', modelType: 'LLM', unitType: 'tokens' });
  });

  it('should bill cached prompt tokens at the cache price on their own line, never more than the prompt', () => {
    const usage = chatUsage(chat, { promptTokens: 1_000, cachedTokens: 400, completionTokens: 0 }, details);
    expect(lineOf(usage, 'Input')).toMatchObject({ units: '600', cost: { usd: 420_000n } });
    expect(lineOf(usage, 'Cache Read')).toMatchObject({ units: '400', cost: { usd: 140_000n } });
    const over = chatUsage(chat, { promptTokens: 100, cachedTokens: 500, completionTokens: 0 }, details);
    expect(lineOf(over, 'Input')?.units).toBe('0');
    expect(lineOf(over, 'Cache Read')?.units).toBe('100');
  });

  it('should use the extended tier only for prompts longer than its threshold', () => {
    const at = chatUsage(think, { promptTokens: 100, cachedTokens: 0, completionTokens: 10 }, details);
    expect(lineOf(at, 'Input')?.cost.usd).toBe(110_000n);
    expect(lineOf(at, 'Output')?.cost.usd).toBe(44_000n);
    const above = chatUsage(think, { promptTokens: 101, cachedTokens: 0, completionTokens: 10 }, details);
    expect(lineOf(above, 'Input')?.cost.usd).toBe(222_200n);
    expect(lineOf(above, 'Output')?.cost.usd).toBe(88_000n);
  });

  it('should round a fraction of a nano up, never charging less than the price', () => {
    const tiny = textModel('tiny', { input: '0.0000005', output: '0' });
    const usage = chatUsage(tiny, { promptTokens: 1, cachedTokens: 0, completionTokens: 0 }, details);
    expect(lineOf(usage, 'Input')?.cost).toEqual({ usd: 1n, diem: 1n });
  });

  it('should add the web search as its own line at the augment price', () => {
    const usage = chatUsage(
      chat,
      { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
      {
        ...details,
        webSearch: true,
      },
    );
    expect(lineOf(usage, 'Web Search')).toMatchObject({ sku: 'augment-web-search', units: '1', cost: AUGMENT_PRICE });
  });

  it('should reserve the worst case: headroom on the prompt, every choice, the dearest tier, the search', () => {
    expect(reservedPromptTokens(100)).toBe(157);
    const bound = maxChatCost(chatPrices(think), {
      promptEstimate: 100,
      maxOutputTokens: 50,
      choices: 2,
      webSearch: true,
    });
    // 314 prompt tokens at 2.2 and 100 output tokens at 8.8 (the extended tier), plus 0.01 USD.
    expect(bound.usd).toBe(690_800n + 880_000n + AUGMENT_PRICE.usd);
    const charged = chatUsage(think, { promptTokens: 125, cachedTokens: 0, completionTokens: 100 }, details);
    const total = charged.lines.reduce((sum, line) => sum + line.cost.usd, 0n);
    expect(total).toBeLessThanOrEqual(bound.usd);
  });
});
