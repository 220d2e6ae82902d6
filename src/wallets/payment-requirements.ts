import type { X402Config } from '../config.ts';
import type { Nano } from '../billing/money.ts';

/** CAIP-2 id of Base mainnet, the only network top-ups and sign-ins use. */
export const BASE_NETWORK = 'eip155:8453';
export const BASE_CHAIN_ID = 8453;
export const USDC_DECIMALS = 6;
/** EIP-712 domain name and version of USDC's `transferWithAuthorization` (EIP-3009). */
export const USDC_EIP712 = { name: 'USD Coin', version: '2' } as const;
export const X402_VERSION = 2;
export const PAYMENT_TIMEOUT_SECONDS = 300;

/** One entry of an x402 `accepts` list (scheme `exact`; docs/api.md#wallet-callers-x402). */
export interface PaymentRequirement {
  readonly scheme: 'exact';
  readonly network: typeof BASE_NETWORK;
  /** Smallest top-up in USDC base units (6 decimals), as a decimal string. */
  readonly amount: string;
  readonly asset: string;
  readonly payTo: string;
  readonly maxTimeoutSeconds: number;
  readonly extra: { readonly name: string; readonly version: string };
}

const NANO_PER_USDC_UNIT = 10n ** BigInt(9 - USDC_DECIMALS);

/** nano-USD → USDC base units, rounded up so a requirement never asks for less than the configured USD. */
export function nanoToUsdcUnits(amount: Nano): bigint {
  return (amount + NANO_PER_USDC_UNIT - 1n) / NANO_PER_USDC_UNIT;
}

/** USDC base units → nano-USD (exact: 1 base unit is 1000 nano-USD). */
export function usdcUnitsToNano(units: bigint): Nano {
  return units * NANO_PER_USDC_UNIT;
}

/** The `accepts` list of a 402 answer; empty while no receiver is configured (top-ups are then off). */
export function paymentRequirements(x402: X402Config): PaymentRequirement[] {
  if (!x402.receiver) return [];
  return [
    {
      scheme: 'exact',
      network: BASE_NETWORK,
      amount: nanoToUsdcUnits(x402.minTopUpNano).toString(),
      asset: x402.usdcAddress,
      payTo: x402.receiver,
      maxTimeoutSeconds: PAYMENT_TIMEOUT_SECONDS,
      extra: { name: USDC_EIP712.name, version: USDC_EIP712.version },
    },
  ];
}

/** The x402 requirements of a 402, `{x402Version, accepts}` (REST's PAYMENT-REQUIRED header, GraphQL's extensions). */
export function paymentRequired(x402: X402Config) {
  return { x402Version: X402_VERSION, accepts: paymentRequirements(x402) };
}

/** The `PAYMENT-REQUIRED` header: the requirements `{x402Version, accepts}` as base64 JSON. */
export function paymentRequiredHeader(x402: X402Config): string {
  return Buffer.from(JSON.stringify(paymentRequired(x402)), 'utf8').toString('base64');
}
