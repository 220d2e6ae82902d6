import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { isAddress, isHex, verifyMessage } from 'viem';
import { z } from 'zod';
import { findOrCreateWalletAccount } from '../accounts/account.repository.ts';
import type { Database } from '../db/database.ts';
import { AuthenticationError, ValidationError } from '../errors.ts';
import { parseInput } from '../validation.ts';
import { CreateApiKeyInput } from './api-key.inputs.ts';
import type { ApiKeyService, CreatedApiKey } from './api-key.service.ts';
import { operator, type AuthContext } from './auth-context.ts';

const TOKEN_LIFETIME_SECONDS = 600;
const AUDIENCE = 'lagoon:generate_web3_key';

/** POST /api_keys/generate_web3_key: the proof (address, signature, token) and the key's options. */
export const Web3KeyInput = CreateApiKeyInput.extend({
  address: z.string().refine((value) => isAddress(value, { strict: false }), 'Must be a wallet address (0x…)'),
  signature: z.string().refine((value) => isHex(value) && value.length >= 132, 'Must be a hex signature (0x…)'),
  token: z.string().min(1).max(2048),
  description: CreateApiKeyInput.shape.description.default('Web3 API Key'),
}).strict();

/**
 * API keys for wallets (GET and POST /api_keys/generate_web3_key). GET hands out a short-lived signed token; the
 * wallet signs it (EIP-191 personal_sign) and POSTs the signature, which proves it holds the address: the key is
 * created for that wallet's account (the same account its sign-in pays from), once per token. No credentials are
 * needed on either call: the signature is the proof.
 */
export class Web3KeyService {
  constructor(
    private readonly deps: {
      db: Database;
      apiKeys: ApiKeyService;
      secret: () => Promise<Buffer>;
      now?: () => Date;
    },
  ) {}

  async token(_auth: AuthContext): Promise<string> {
    const now = Math.floor((this.deps.now?.() ?? new Date()).getTime() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setJti(randomUUID())
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
      .sign(await this.deps.secret());
  }

  async create(_auth: AuthContext, input: unknown): Promise<CreatedApiKey> {
    const { address, signature, token, ...options } = parseInput(Web3KeyInput, input);
    const now = this.deps.now?.() ?? new Date();
    const claims = await this.verifyToken(token, now);
    const signed = await verifyMessage({
      address: address as `0x${string}`,
      message: token,
      signature: signature as `0x${string}`,
    }).catch(() => false);
    if (!signed) throw new AuthenticationError('The signature is not the token signed by this address');
    await this.spend(claims.jti, address, new Date(claims.exp * 1000), now);
    const account = await findOrCreateWalletAccount(this.deps.db, address);
    return this.deps.apiKeys.createWithOptionsAsOperator(operator('web3-key'), account.id, options);
  }

  private async verifyToken(token: string, now: Date): Promise<{ jti: string; exp: number }> {
    try {
      const { payload } = await jwtVerify(token, await this.deps.secret(), {
        audience: AUDIENCE,
        algorithms: ['HS256'],
        currentDate: now,
      });
      if (typeof payload.jti !== 'string' || typeof payload.exp !== 'number') throw new Error('incomplete token');
      return { jti: payload.jti, exp: payload.exp };
    } catch (error) {
      const reason =
        error instanceof joseErrors.JWTExpired ? 'has expired' : 'is not a token from GET /api_keys/generate_web3_key';
      throw new ValidationError(`Invalid request: token ${reason}`, [
        { path: ['token'], message: `The token ${reason}` },
      ]);
    }
  }

  /** Marks the token used; a second use is refused. Spent tokens past their expiry are deleted on the way. */
  private async spend(tokenId: string, address: string, expiresAt: Date, now: Date): Promise<void> {
    await this.deps.db.deleteFrom('web3_key_tokens').where('expires_at', '<', now).execute();
    const inserted = await this.deps.db
      .insertInto('web3_key_tokens')
      .values({ token_id: tokenId, wallet_address: address.toLowerCase(), expires_at: expiresAt })
      .onConflict((oc) => oc.column('token_id').doNothing())
      .executeTakeFirst();
    if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n)
      throw new ValidationError('Invalid request: token was already used; get a new one', [
        { path: ['token'], message: 'Already used' },
      ]);
  }
}
