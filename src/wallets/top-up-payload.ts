import { z } from 'zod';
import { invalidPayment } from './top-up-errors.ts';

/*
 * The x402 payment header (PAYMENT-SIGNATURE, X-PAYMENT or X-402-Payment): base64 JSON of a payment payload
 * carrying an EIP-3009 TransferWithAuthorization. Both shapes clients send are read: the flat one
 * `{x402Version, scheme, network, payload}` and v2's `{x402Version, accepted: {scheme, network, ...}, payload}`.
 */

export const PAYMENT_HEADERS = ['payment-signature', 'x-payment', 'x-402-payment'] as const;

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = z.union([z.string().regex(/^\d{1,78}$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));

const Authorization = z.object({
  from: z.string().regex(HEX_ADDRESS),
  to: z.string().regex(HEX_ADDRESS),
  value: UINT,
  validAfter: UINT,
  validBefore: UINT,
  nonce: z.string().regex(HEX_32),
});

const ExactPayload = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/),
  authorization: Authorization,
});

const Requirement = z.looseObject({
  scheme: z.string(),
  network: z.string(),
  asset: z.string().optional(),
  payTo: z.string().optional(),
});

const PaymentPayload = z.looseObject({
  x402Version: z.number().int(),
  scheme: z.string().optional(),
  network: z.string().optional(),
  accepted: Requirement.optional(),
  payload: ExactPayload,
});

export type TransferAuthorization = z.infer<typeof Authorization>;

export interface ParsedPayment {
  readonly x402Version: number;
  readonly scheme: string;
  readonly network: string;
  /** The asset the client says it pays with (v2 form only). */
  readonly asset: string | undefined;
  readonly signature: `0x${string}`;
  readonly authorization: TransferAuthorization;
  /** The decoded JSON as sent (handed on to a facilitator unchanged). */
  readonly raw: Record<string, unknown>;
}

/** The first payment header present, or undefined. */
export function paymentHeader(header: (name: string) => string | undefined): string | undefined {
  for (const name of PAYMENT_HEADERS) {
    const value = header(name);
    if (value) return value;
  }
  return undefined;
}

export function parsePaymentHeader(value: string): ParsedPayment {
  let decoded: unknown;
  try {
    const text = Buffer.from(value.trim(), 'base64').toString('utf8');
    decoded = JSON.parse(text);
  } catch {
    throw invalidPayment('invalid_payload', 'The payment header is not base64-encoded JSON');
  }
  const parsed = PaymentPayload.safeParse(decoded);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first ? first.path.join('.') || '(root)' : '(root)';
    throw invalidPayment('invalid_payload', `The payment payload is malformed at ${where}: ${first?.message ?? ''}`);
  }
  const { data } = parsed;
  const scheme = data.accepted?.scheme ?? data.scheme;
  const network = data.accepted?.network ?? data.network;
  if (!scheme || !network) throw invalidPayment('invalid_payload', 'The payment payload names no scheme and network');
  return {
    x402Version: data.x402Version,
    scheme,
    network,
    asset: data.accepted?.asset,
    signature: data.payload.signature as `0x${string}`,
    authorization: data.payload.authorization,
    raw: decoded as Record<string, unknown>,
  };
}
