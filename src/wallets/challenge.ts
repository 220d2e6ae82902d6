import { randomBytes } from 'node:crypto';
import type { X402Config } from '../config.ts';
import { formatNano, nanoToNumber, type Nano } from '../billing/money.ts';
import { BASE_NETWORK, paymentRequirements, USDC_DECIMALS, X402_VERSION } from './payment-requirements.ts';
import type { SignInOrigin } from './sign-in-site.ts';

/*
 * What a wallet client is told when it must sign in or top up: a fresh sign-in challenge,
 * the x402 discovery body, and the low-credit body with top-up instructions. `where` is the configured sign-in site
 * (sign-in-site.ts), never the request's Host.
 */

/** The fixed sentence of a Lagoon sign-in message. */
export const SIGN_IN_STATEMENT = 'Sign in to the Lagoon API with your wallet.';
/** How long a handed-out challenge is meant to be signed for. */
const CHALLENGE_TTL_MS = 5 * 60_000;
/** The top-up a low-credit body suggests. */
const SUGGESTED_TOP_UP_NANO: Nano = 10_000_000_000n;

/** 16 hex characters (64 random bits), as the contract's clients make them. */
export const newNonce = (): string => randomBytes(8).toString('hex');

export function signInChallenge(where: SignInOrigin, now = Date.now()) {
  return {
    info: {
      domain: where.host,
      uri: where.origin,
      version: '1',
      nonce: newNonce(),
      issuedAt: new Date(now).toISOString(),
      expirationTime: new Date(now + CHALLENGE_TTL_MS).toISOString(),
      statement: SIGN_IN_STATEMENT,
    },
    supportedChains: [{ chainId: BASE_NETWORK, type: 'eip191' }],
  };
}

/** 402 to a request without credentials on a route a wallet may use: how to pay, sign in or use a key. */
export function discoveryBody(x402: X402Config, where: SignInOrigin, resourceUrl: string) {
  return {
    x402Version: X402_VERSION,
    error: 'Payment required',
    resource: {
      url: resourceUrl,
      description: 'Lagoon API call, paid from a wallet credit or an API key',
      mimeType: 'application/json',
    },
    accepts: paymentRequirements(x402),
    extensions: { 'sign-in-with-x': signInChallenge(where) },
    authOptions: {
      apiKey: {
        header: 'Authorization: Bearer <API key>',
        getKey: `${where.origin}/api/v1/api_keys`,
        docs: `${where.origin}/api/v1/openapi.json`,
      },
      x402Wallet: {
        header: 'SIGN-IN-WITH-X',
        legacyHeader: 'X-Sign-In-With-X',
        topUp: 'POST /api/v1/x402/top-up',
        docs: `${where.origin}/api/v1/openapi.json`,
      },
    },
  };
}

/** 402 to a wallet whose credit does not cover a call or is below the minimum balance. */
export function topUpRequiredBody(x402: X402Config, where: SignInOrigin, balance: Nano) {
  const minimumTopUpUsd = nanoToNumber(x402.minTopUpNano);
  const suggested = SUGGESTED_TOP_UP_NANO > x402.minTopUpNano ? SUGGESTED_TOP_UP_NANO : x402.minTopUpNano;
  return {
    error: 'Payment required',
    code: 'PAYMENT_REQUIRED',
    reason: 'insufficient_balance',
    message: `Wallet credit is ${formatNano(balance)} USD; a call needs at least ${formatNano(x402.minBalanceNano)} USD and its own cost. Top up with USDC on Base.`,
    currentBalanceUsd: nanoToNumber(balance),
    minimumBalanceUsd: nanoToNumber(x402.minBalanceNano),
    suggestedTopUpUsd: nanoToNumber(suggested),
    minimumTopUpUsd,
    supportedTokens: ['USDC'],
    supportedChains: ['base'],
    topUpInstructions: {
      step1: 'POST /api/v1/x402/top-up without a payment header to get the payment requirements (402, `accepts`).',
      step2: 'Sign one `accepts` entry as an EIP-3009 TransferWithAuthorization of USDC on Base (EIP-712).',
      step3: 'POST /api/v1/x402/top-up again with the signed payment, base64-encoded, in the PAYMENT-SIGNATURE header.',
      receiverWallet: x402.receiver ?? '',
      tokenAddress: x402.usdcAddress,
      tokenDecimals: USDC_DECIMALS,
      network: BASE_NETWORK,
      minimumAmountUsd: minimumTopUpUsd,
    },
    siwxChallenge: signInChallenge(where),
  };
}
