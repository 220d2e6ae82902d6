import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { findOrCreateWalletAccount } from '../../src/accounts/account.repository.ts';
import { operator } from '../../src/auth/auth-context.ts';
import { parseNano } from '../../src/billing/money.ts';
import type { App } from '../../src/app.ts';

/**
 * The settings that offer top-ups paid to `receiver`, for suites that show the offer but never settle one: a receiver
 * needs a settlement path or the start is refused (src/config.ts), so this names a facilitator nobody calls.
 */
export const offerTopUps = (receiver: string): Record<string, string> => ({
  LAGOON_X402_RECEIVER: receiver,
  LAGOON_X402_FACILITATOR_URL: 'http://127.0.0.1:9/never-called',
});

/** A fresh local wallet (viem), as a wallet client would hold it. */
export const newWallet = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

let nonceCounter = 0;
/** 16 hex characters, unique within the run. */
export const testNonce = (): string =>
  `${Date.now().toString(16)}${(nonceCounter++).toString(16)}`.padEnd(16, '0').slice(-16);

export interface SignInOptions {
  /** host[:port] the message names (the server's Host). */
  readonly domain: string;
  readonly chainId?: number;
  readonly payloadChainId?: unknown;
  readonly nonce?: string;
  readonly issuedAt?: Date;
  readonly expirationTime?: Date | null;
  readonly notBefore?: Date;
  /** The payload's `address` (default the message's). */
  readonly address?: string;
  /** The address the message signs in, when it is not the signer's: a contract wallet (EIP-1271) its owner signs for. */
  readonly account?: Address;
  /** Signs with this account instead (a forged signature). */
  readonly signer?: PrivateKeyAccount;
  /** Replaces the message text after signing. */
  readonly message?: (text: string) => string;
}

/** A SIGN-IN-WITH-X header value: base64 JSON of {address, message, signature, timestamp, chainId}. */
export async function signInHeader(wallet: PrivateKeyAccount, options: SignInOptions): Promise<string> {
  const issuedAt = options.issuedAt ?? new Date();
  const account = options.account ?? wallet.address;
  const text = createSiweMessage({
    address: account,
    chainId: options.chainId ?? 8453,
    domain: options.domain,
    nonce: options.nonce ?? testNonce(),
    uri: `http://${options.domain}`,
    version: '1',
    statement: 'Sign in to the Lagoon API with your wallet.',
    issuedAt,
    ...(options.expirationTime !== null && {
      expirationTime: options.expirationTime ?? new Date(issuedAt.getTime() + 10 * 60_000),
    }),
    ...(options.notBefore && { notBefore: options.notBefore }),
  });
  const signature = await (options.signer ?? wallet).signMessage({ message: text });
  const payload = {
    address: options.address ?? account,
    message: options.message ? options.message(text) : text,
    signature,
    timestamp: issuedAt.getTime(),
    chainId: options.payloadChainId ?? 8453,
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

/** Credits a wallet's account (made if new) with USD, as the operator; its account id. */
export async function creditWallet(app: App, address: string, usd: string): Promise<string> {
  const account = await findOrCreateWalletAccount(app.database.db, address);
  await app.services.billing.credit(operator(), {
    accountId: account.id,
    currency: 'USD',
    amount: parseNano(usd),
    type: 'TOP_UP',
  });
  return account.id;
}
