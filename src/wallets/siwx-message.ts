import { createHash } from 'node:crypto';
import { isAddress, isHex, type Address, type Hex } from 'viem';
import { parseSiweMessage } from 'viem/siwe';
import { AppError, clip, type SiwxCode } from '../errors.ts';
import { BASE_CHAIN_ID } from './payment-requirements.ts';

/** The sign-in header (`SIGN-IN-WITH-X`, legacy `X-Sign-In-With-X`; docs/api.md#wallet-callers-x402), as Node lower-cases them. */
export const SIWX_HEADER = 'sign-in-with-x';
export const SIWX_LEGACY_HEADER = 'x-sign-in-with-x';

/** How far in the future a message's `issuedAt` may lie (clock skew between wallet and server). */
export const FUTURE_SKEW_MS = 30_000;
/** At least this many alphanumerics (EIP-4361). */
const NONCE = /^[a-zA-Z0-9]{8,}$/;
/** A header larger than this is no sign-in (a message is a few hundred bytes). */
const MAX_HEADER_CHARS = 8_192;

export const SIWX_FAILURES = [
  'PARSE_ERROR',
  'INVALID_PAYLOAD',
  'INVALID_MESSAGE',
  'ADDRESS_MISMATCH',
  'UNSUPPORTED_CHAIN',
  'CHAIN_MISMATCH',
  'DOMAIN_MISMATCH',
  'MISSING_NONCE',
  'EXPIRED',
  'FUTURE_TIMESTAMP',
  'NOT_BEFORE',
  'INVALID_SIGNATURE',
  'NONCE_REUSED',
] as const;
export type SiwxFailure = (typeof SIWX_FAILURES)[number];

/** A refused wallet sign-in: 401 with code `SIWX_<reason>` (docs/api.md#wallet-callers-x402). */
export class SiwxError extends AppError {
  readonly code: SiwxCode;
  constructor(
    readonly reason: SiwxFailure,
    message: string,
  ) {
    super(`Wallet sign-in refused: ${message}`);
    this.code = `SIWX_${reason}` satisfies SiwxCode;
  }
}

/** A sign-in header that parsed and passed every check that needs neither the signature nor the database. */
export interface CheckedSignIn {
  readonly address: Address;
  readonly message: string;
  readonly signature: Hex;
  readonly domain: string;
  readonly nonce: string;
  /** When the header stops being a credential: the message's expiry, or its max age, whichever comes first. */
  readonly expiresAt: number;
  /** Identifies the signed message and signature (a nonce belongs to one). */
  readonly messageHash: string;
}

export interface SignInRules {
  /** Accepted message domains (lower-case), from configuration (sign-in-site.ts). */
  readonly domains: readonly string[];
  readonly maxAgeMs: number;
}

/** Decodes the header and checks everything but the signature and the nonce's history, in the order docs/api.md gives. */
export function checkSignIn(header: string, rules: SignInRules, now: number): CheckedSignIn {
  const payload = decodePayload(header);
  const { address, message, signature } = payload;
  if (typeof address !== 'string' || !isAddress(address, { strict: false }))
    throw new SiwxError('INVALID_PAYLOAD', '`address` must be a 0x-prefixed 20-byte hex address');
  if (typeof message !== 'string' || message.length === 0)
    throw new SiwxError('INVALID_PAYLOAD', '`message` must be the signed EIP-4361 text');
  if (typeof signature !== 'string' || !isHex(signature) || signature.length < 4)
    throw new SiwxError('INVALID_PAYLOAD', '`signature` must be a 0x-prefixed hex string');
  const chain = chainOf(payload.chainId);
  if (chain === undefined) throw new SiwxError('INVALID_PAYLOAD', '`chainId` must be 8453, "8453" or "eip155:8453"');
  if (chain !== BASE_CHAIN_ID)
    throw new SiwxError('UNSUPPORTED_CHAIN', `chain ${clip(String(payload.chainId))} is not supported; use 8453`);

  const parsed = parseSiweMessage(message);
  if (!parsed.address || parsed.domain === undefined) throw new SiwxError('INVALID_MESSAGE', 'not an EIP-4361 message');
  if (!parsed.nonce) {
    if (!/\nNonce: /.test(message)) throw new SiwxError('MISSING_NONCE', 'the message has no nonce');
    throw new SiwxError('INVALID_MESSAGE', 'the nonce must be alphanumeric');
  }
  if (!parsed.uri || parsed.version !== '1' || parsed.chainId === undefined || !parsed.issuedAt)
    throw new SiwxError('INVALID_MESSAGE', 'the message needs URI, Version 1, Chain ID and Issued At');
  const times = [parsed.issuedAt, parsed.expirationTime, parsed.notBefore];
  if (times.some((time) => time !== undefined && Number.isNaN(time.getTime())))
    throw new SiwxError('INVALID_MESSAGE', 'the message times must be ISO 8601 date-times');
  if (parsed.address.toLowerCase() !== address.toLowerCase())
    throw new SiwxError('ADDRESS_MISMATCH', 'the message is signed for another address');
  if (parsed.chainId !== chain) throw new SiwxError('CHAIN_MISMATCH', 'the message names another chain');

  const domain = parsed.domain.toLowerCase();
  if (!rules.domains.includes(domain))
    throw new SiwxError('DOMAIN_MISMATCH', `domain "${clip(domain)}" is not accepted here`);
  if (!NONCE.test(parsed.nonce)) throw new SiwxError('MISSING_NONCE', 'the nonce must be 8 or more alphanumerics');

  const issuedAt = parsed.issuedAt.getTime();
  const expiresAt = Math.min(parsed.expirationTime?.getTime() ?? Infinity, issuedAt + rules.maxAgeMs);
  if (issuedAt > now + FUTURE_SKEW_MS) throw new SiwxError('FUTURE_TIMESTAMP', 'issuedAt lies in the future');
  if (expiresAt <= now) throw new SiwxError('EXPIRED', 'the message has expired');
  if (parsed.notBefore && parsed.notBefore.getTime() > now)
    throw new SiwxError('NOT_BEFORE', 'the message is not valid yet (notBefore)');

  const messageHash = createHash('sha256').update(message).update('\n').update(signature.toLowerCase()).digest('hex');
  return {
    address: parsed.address,
    message,
    signature,
    domain,
    nonce: parsed.nonce,
    expiresAt,
    messageHash,
  };
}

function decodePayload(header: string): Record<string, unknown> {
  if (header.length > MAX_HEADER_CHARS) throw new SiwxError('PARSE_ERROR', 'the header is too large');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8'));
  } catch {
    throw new SiwxError('PARSE_ERROR', 'the header must be base64 of a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new SiwxError('PARSE_ERROR', 'the header must be base64 of a JSON object');
  return value as Record<string, unknown>;
}

/** 8453, "8453" and "eip155:8453" name the same chain; anything else that is a chain id is another chain. */
function chainOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^(?:eip155:)?(\d{1,15})$/.exec(value.trim());
  return match?.[1] ? Number(match[1]) : value.includes(':') ? -1 : undefined;
}
