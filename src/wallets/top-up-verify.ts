import { getAddress, verifyTypedData, type Address } from 'viem';
import type { X402Config } from '../config.ts';
import type { Nano } from '../billing/money.ts';
import { invalidPayment } from './top-up-errors.ts';
import type { ParsedPayment } from './top-up-payload.ts';
import { BASE_CHAIN_ID, BASE_NETWORK, USDC_EIP712, usdcUnitsToNano, X402_VERSION } from './payment-requirements.ts';

/** EIP-3009's typed data: what the payer signed (USDC's `transferWithAuthorization`). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The EIP-712 domain of the configured USDC on Base. */
export const usdcDomain = (asset: string) =>
  ({
    name: USDC_EIP712.name,
    version: USDC_EIP712.version,
    chainId: BASE_CHAIN_ID,
    verifyingContract: getAddress(asset),
  }) as const;

/** Settlement needs a few seconds of the window left: an authorization about to expire would revert on chain. */
const MIN_SECONDS_LEFT = 6n;

export interface VerifiedPayment {
  readonly payer: Address;
  readonly amountUnits: bigint;
  readonly amountNano: Nano;
  readonly validBefore: Date;
}

/**
 * Checks a payment against the configured requirement, each failure with its own reason: version and scheme,
 * network, asset, recipient, time window (now in Unix seconds), amount bounds and the EIP-712 signature. Whether
 * the nonce was used is the payments table's unique key (top-up.repository.ts).
 */
export async function verifyPayment(
  x402: X402Config,
  payment: ParsedPayment,
  nowSeconds: bigint,
): Promise<VerifiedPayment> {
  if (!x402.receiver) throw invalidPayment('top_ups_disabled', 'Top-ups are not configured on this server');
  if (payment.x402Version !== X402_VERSION && payment.x402Version !== 1)
    throw invalidPayment('unsupported_version', `x402Version ${payment.x402Version} is not supported`);
  if (payment.scheme !== 'exact') throw invalidPayment('unsupported_scheme', 'Only the "exact" scheme is accepted');
  if (payment.network !== BASE_NETWORK && payment.network !== 'base')
    throw invalidPayment('network_mismatch', `Payments are accepted on ${BASE_NETWORK} only`);
  if (payment.asset !== undefined && payment.asset.toLowerCase() !== x402.usdcAddress.toLowerCase())
    throw invalidPayment('asset_mismatch', `The asset must be ${x402.usdcAddress}`);
  const { authorization } = payment;
  if (authorization.to.toLowerCase() !== x402.receiver.toLowerCase())
    throw invalidPayment('recipient_mismatch', `The authorization must pay ${x402.receiver}`);
  if (authorization.validAfter > nowSeconds)
    throw invalidPayment('not_yet_valid', 'The authorization is not valid yet (validAfter is in the future)');
  if (authorization.validBefore <= nowSeconds + MIN_SECONDS_LEFT)
    throw invalidPayment('expired', 'The authorization has expired or expires too soon (validBefore)');
  const amountNano = usdcUnitsToNano(authorization.value);
  if (amountNano < x402.minTopUpNano)
    throw invalidPayment('amount_too_small', 'The amount is below the minimum top-up');
  if (amountNano > x402.maxTopUpNano)
    throw invalidPayment('amount_too_large', 'The amount is above the maximum top-up');
  const valid = await verifyTypedData({
    address: getAddress(authorization.from),
    domain: usdcDomain(x402.usdcAddress),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: getAddress(authorization.from),
      to: getAddress(authorization.to),
      value: authorization.value,
      validAfter: authorization.validAfter,
      validBefore: authorization.validBefore,
      nonce: authorization.nonce as `0x${string}`,
    },
    signature: payment.signature,
  }).catch(() => false);
  if (!valid) throw invalidPayment('invalid_signature', 'The authorization is not signed by its `from` address');
  return {
    payer: getAddress(authorization.from),
    amountUnits: authorization.value,
    amountNano,
    validBefore: new Date(
      Number(authorization.validBefore > 10n ** 12n ? 10n ** 12n : authorization.validBefore) * 1000,
    ),
  };
}
