import { costNano, formatNanoFixed, parseAtto, type Atto, type Nano } from '../billing/money.ts';
import { TIER_MULTIPLIER, type MethodTier } from './methods.ts';

/** An item answered with a JSON-RPC `error` under HTTP 200 costs this instead of its tier. */
export const ERROR_CREDITS = 5;
/** The default price per credit (20 credits = 0.0000125 USD, docs/api.md); the operator may change it. */
export const DEFAULT_PRICE_PER_CREDIT_USD = '0.000000625';

export const creditsOf = (baseCredits: number, tier: MethodTier): number => baseCredits * TIER_MULTIPLIER[tier];

/** Credits of a batch once answered: each item at its tier, or ERROR_CREDITS when it came back with an error. */
export function chargedCredits(
  baseCredits: number,
  items: readonly { tier: MethodTier }[],
  errored: readonly boolean[],
): number {
  return items.reduce(
    (sum, item, index) => sum + (errored[index] ? ERROR_CREDITS : creditsOf(baseCredits, item.tier)),
    0,
  );
}

/** The most a batch can cost: every item at its tier (an error always costs less). */
export function maxCredits(baseCredits: number, items: readonly { tier: MethodTier }[]): number {
  return items.reduce((sum, item) => sum + creditsOf(baseCredits, item.tier), 0);
}

/** Exact cost in nano-USD (the price may be finer than a nano; the total is rounded up to the next nano). */
export const costOfCredits = (credits: number, pricePerCreditAtto: Atto): Nano =>
  costNano(BigInt(credits), pricePerCreditAtto);

/** `X-Service-RPC-Cost-USD`: 8 decimal places, as clients expect, e.g. 20 credits → "0.00001250". */
export const costHeaderValue = (cost: Nano): string => formatNanoFixed(cost, 8);

export const parsePricePerCredit = (usd: string | number): Atto => parseAtto(usd);
