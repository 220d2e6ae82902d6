import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES, usdcDomain } from '../../src/wallets/top-up-verify.ts';

/** USDC base units (6 decimals) of a whole-dollar amount. */
export const usdc = (dollars: number): bigint => BigInt(Math.round(dollars * 100)) * 10_000n;

export interface AuthorizationFields {
  to: Address;
  value: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
  /** Claim this `from` while signing with `signer` (a forged authorization). */
  from?: Address;
}

export interface SignedPayment {
  header: string;
  nonce: Hex;
  authorization: Record<string, string>;
  signature: Hex;
}

/**
 * An x402 payment header as a client makes it: the payer signs an EIP-3009 TransferWithAuthorization under the
 * token's EIP-712 domain; `form` picks the v2 shape (`accepted`) or the flat one (`scheme`, `network`).
 */
export async function signPayment(
  signer: PrivateKeyAccount,
  token: Address,
  fields: AuthorizationFields,
  form: 'v2' | 'flat' = 'v2',
): Promise<SignedPayment> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: fields.from ?? signer.address,
    to: fields.to,
    value: fields.value,
    validAfter: fields.validAfter ?? 0n,
    validBefore: fields.validBefore ?? now + 300n,
    nonce: fields.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await signer.signTypedData({
    domain: usdcDomain(token),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const authorization = {
    from: message.from,
    to: message.to,
    value: message.value.toString(),
    validAfter: message.validAfter.toString(),
    validBefore: message.validBefore.toString(),
    nonce: message.nonce,
  };
  const payload = { signature, authorization };
  const body =
    form === 'v2'
      ? {
          x402Version: 2,
          accepted: {
            scheme: 'exact',
            network: 'eip155:8453',
            amount: message.value.toString(),
            asset: token,
            payTo: fields.to,
            maxTimeoutSeconds: 300,
            extra: { name: 'USD Coin', version: '2' },
          },
          payload,
        }
      : { x402Version: 2, scheme: 'exact', network: 'eip155:8453', payload };
  return {
    header: Buffer.from(JSON.stringify(body)).toString('base64'),
    nonce: message.nonce,
    authorization,
    signature,
  };
}
