import { describe, expect, it } from 'vitest';
import { BASE_USDC_ADDRESS, ConfigError, loadConfig } from '../../src/config.ts';
import {
  nanoToUsdcUnits,
  paymentRequiredHeader,
  paymentRequirements,
  usdcUnitsToNano,
} from '../../src/wallets/payment-requirements.ts';

const RECEIVER = '0x1111111111111111111111111111111111111111';

describe('x402 settings', () => {
  it('defaults: Base USDC, 5 to 10000 USD top-ups, 0.10 USD minimum balance, 10 minute sign-ins', () => {
    const { x402 } = loadConfig({});
    expect(x402.receiver).toBeUndefined();
    expect(x402.usdcAddress).toBe(BASE_USDC_ADDRESS);
    expect(x402.minTopUpNano).toBe(5_000_000_000n);
    expect(x402.maxTopUpNano).toBe(10_000_000_000_000n);
    expect(x402.minBalanceNano).toBe(100_000_000n);
    expect(x402.siweDomains).toEqual([]);
    expect(x402.siweMaxAgeMs).toBe(600_000);
    expect(x402.confirmations).toBe(10);
  });

  it('reads every variable, domains lower-cased', () => {
    const { x402 } = loadConfig({
      LAGOON_X402_RECEIVER: RECEIVER,
      LAGOON_X402_MIN_TOP_UP_USD: '1.5',
      LAGOON_X402_MAX_TOP_UP_USD: '20',
      LAGOON_X402_MIN_BALANCE_USD: '0',
      LAGOON_X402_FACILITATOR_URL: 'https://facilitator.example/x402',
      LAGOON_BASE_RPC_URL: 'http://127.0.0.1:8545',
      LAGOON_X402_SETTLEMENT_KEY: `0x${'ab'.repeat(32)}`,
      LAGOON_SIWE_DOMAINS: 'API.example.com, localhost:8080',
      LAGOON_SIWE_MAX_AGE_SECONDS: '120',
    });
    expect(x402).toMatchObject({
      receiver: RECEIVER,
      minTopUpNano: 1_500_000_000n,
      maxTopUpNano: 20_000_000_000n,
      minBalanceNano: 0n,
      facilitatorUrl: 'https://facilitator.example/x402',
      baseRpcUrl: 'http://127.0.0.1:8545',
      siweDomains: ['api.example.com', 'localhost:8080'],
      siweMaxAgeMs: 120_000,
    });
  });

  it.each([
    ['LAGOON_X402_RECEIVER', '0x1234'],
    ['LAGOON_X402_USDC_ADDRESS', 'usdc'],
    ['LAGOON_X402_MIN_TOP_UP_USD', '-1'],
    ['LAGOON_X402_MIN_BALANCE_USD', '1e3'],
    ['LAGOON_X402_SETTLEMENT_KEY', '0xabc'],
    ['LAGOON_BASE_RPC_URL', 'ftp://node'],
    ['LAGOON_SIWE_MAX_AGE_SECONDS', '0'],
  ])('refuses a bad %s, naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('refuses a minimum top-up above the maximum, or zero', () => {
    expect(() => loadConfig({ LAGOON_X402_MIN_TOP_UP_USD: '50', LAGOON_X402_MAX_TOP_UP_USD: '10' })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig({ LAGOON_X402_MIN_TOP_UP_USD: '0' })).toThrow(ConfigError);
  });

  it('refuses a receiver nothing can settle (every payment would be a 503), naming the missing settings', () => {
    const rpc = { LAGOON_BASE_RPC_URL: 'http://127.0.0.1:8545' };
    const key = { LAGOON_X402_SETTLEMENT_KEY: `0x${'ab'.repeat(32)}` };
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ LAGOON_X402_RECEIVER: RECEIVER, ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      return undefined;
    };
    const settings = 'set LAGOON_X402_FACILITATOR_URL, or LAGOON_BASE_RPC_URL and LAGOON_X402_SETTLEMENT_KEY';
    expect(refusal({})).toBe(
      `Invalid environment: LAGOON_X402_RECEIVER is set, but nothing could settle a top-up: ${settings} ` +
        '(missing: LAGOON_BASE_RPC_URL, LAGOON_X402_SETTLEMENT_KEY) to settle on chain; or unset LAGOON_X402_RECEIVER ' +
        'to offer no top-ups',
    );
    expect(refusal(rpc)).toContain('(missing: LAGOON_X402_SETTLEMENT_KEY)');
    expect(refusal(key)).toContain('(missing: LAGOON_BASE_RPC_URL)');
    // Either settlement path will do; without a receiver nothing is offered, so nothing is needed.
    expect(refusal({ LAGOON_X402_FACILITATOR_URL: 'https://facilitator.example/x402' })).toBeUndefined();
    expect(refusal({ ...rpc, ...key })).toBeUndefined();
    expect(() => loadConfig({ ...rpc })).not.toThrow();
  });
});

describe('payment requirements', () => {
  it('one exact USDC requirement on Base for the minimum top-up', () => {
    const { x402 } = loadConfig({
      LAGOON_X402_RECEIVER: RECEIVER,
      LAGOON_X402_FACILITATOR_URL: 'https://facilitator.example/x402',
    });
    expect(paymentRequirements(x402)).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '5000000',
        asset: BASE_USDC_ADDRESS,
        payTo: RECEIVER,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
    const header: unknown = JSON.parse(Buffer.from(paymentRequiredHeader(x402), 'base64').toString('utf8'));
    expect(header).toEqual({ x402Version: 2, accepts: paymentRequirements(x402) });
  });

  it('none without a receiver', () => {
    expect(paymentRequirements(loadConfig({}).x402)).toEqual([]);
  });

  it('converts between nano-USD and USDC base units exactly, rounding a requirement up', () => {
    expect(nanoToUsdcUnits(5_000_000_000n)).toBe(5_000_000n);
    expect(nanoToUsdcUnits(1n)).toBe(1n);
    expect(usdcUnitsToNano(1n)).toBe(1000n);
  });
});
