/*
 * The answers of POST /x402/top-up that are not the usual `{error, code}` body (docs/api.md#wallet-top-up-x402):
 * a refused payment is `{error: "X402_INVALID_PAYMENT", message, details: {reason}}`. They are kept apart from
 * AppError so their bodies stay exactly these.
 */

/** Why a payment was refused before any settlement (the `details.reason` of a 400). */
export type InvalidPaymentReason =
  | 'invalid_payload'
  | 'unsupported_scheme'
  | 'unsupported_version'
  | 'network_mismatch'
  | 'asset_mismatch'
  | 'recipient_mismatch'
  | 'invalid_signature'
  | 'not_yet_valid'
  | 'expired'
  | 'amount_too_small'
  | 'amount_too_large'
  | 'nonce_already_used'
  | 'top_ups_disabled';

export class TopUpFailure extends Error {
  constructor(
    readonly status: 400 | 402 | 409 | 503,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.message === 'string' ? body.message : String(body.error));
  }
}

export function invalidPayment(reason: InvalidPaymentReason, message: string): TopUpFailure {
  // `code` repeats `error` so the body also has the shape of every other error.
  return new TopUpFailure(400, {
    error: 'X402_INVALID_PAYMENT',
    code: 'X402_INVALID_PAYMENT',
    message,
    details: { reason },
  });
}

export const paymentInProgress = (): TopUpFailure =>
  new TopUpFailure(409, {
    error: 'This payment is already being settled',
    code: 'PAYMENT_IN_PROGRESS',
  });

export const settlementFailed = (reason: string): TopUpFailure =>
  new TopUpFailure(402, {
    error: 'The payment could not be settled; nothing was credited',
    code: 'SETTLEMENT_FAILED',
    details: { reason },
  });
