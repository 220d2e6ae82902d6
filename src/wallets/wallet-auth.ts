import { createHash } from 'node:crypto';
import { createPublicClient, http, verifyMessage, type Address, type Hex } from 'viem';
import { findOrCreateWalletAccount } from '../accounts/account.repository.ts';
import type { X402Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { SignInSite } from './sign-in-site.ts';
import { checkSignIn, SiwxError, type CheckedSignIn } from './siwx-message.ts';
import { claimNonce } from './siwx-nonces.ts';

/** A verified sign-in: the wallet's account, its address (lower-case) and when the header stops being valid. */
export interface WalletSignIn {
  readonly accountId: string;
  readonly walletAddress: string;
  readonly domain: string;
  readonly expiresAt: number;
}

/** Verified headers kept at once; past this the oldest go first (a header is re-verified on its next use). */
const CACHE_MAX_ENTRIES = 20_000;

/**
 * Verifies sign-in headers: the message checks, then the signature (EIP-191 offline; an EIP-1271
 * contract wallet through the Base node when LAGOON_BASE_RPC_URL is set), then the nonce claim in the database, then
 * the wallet's account (created on first sign-in). A verified header is cached by its SHA-256 until it expires, so a
 * client that reuses its header pays one hash and one map lookup per request.
 */
export class WalletAuthenticator {
  private readonly cache = new Map<string, WalletSignIn>();
  /** EIP-1271 / ERC-6492 check through the Base node (contract wallets); none without LAGOON_BASE_RPC_URL. */
  private readonly verifyOnChain:
    ((args: { address: Address; message: string; signature: Hex }) => Promise<boolean>) | undefined;

  constructor(
    private readonly deps: {
      db: Database;
      x402: Pick<X402Config, 'siweMaxAgeMs' | 'baseRpcUrl'>;
      /** The domains a message may name, from configuration (never the request's Host). */
      site: Pick<SignInSite, 'domains'>;
      now?: () => number;
    },
  ) {
    const url = deps.x402.baseRpcUrl;
    if (url) {
      // viem's chain list is some 700 modules (about 1 s of CPU to load, docs/performance.md "Start-up"): loaded
      // with the first contract-wallet sign-in, not with the server.
      const connect = async () => {
        const { base } = await import('viem/chains');
        return createPublicClient({ chain: base, transport: http(url, { retryCount: 1 }) });
      };
      let client: ReturnType<typeof connect> | undefined;
      this.verifyOnChain = async (args) => (await (client ??= connect())).verifyMessage(args);
    }
  }

  async verify(header: string): Promise<WalletSignIn> {
    const now = this.deps.now?.() ?? Date.now();
    const key = createHash('sha256').update(header).digest('base64url');
    const cached = this.cache.get(key);
    const domains = this.deps.site.domains;
    if (cached && cached.expiresAt > now && domains.includes(cached.domain)) return cached;
    if (cached) this.cache.delete(key);
    const checked = checkSignIn(header, { domains, maxAgeMs: this.deps.x402.siweMaxAgeMs }, now);
    if (!(await this.signatureValid(checked)))
      throw new SiwxError('INVALID_SIGNATURE', 'the signature does not match the address');
    if (!(await claimNonce(this.deps.db, checked.nonce, checked.messageHash, new Date(checked.expiresAt))))
      throw new SiwxError('NONCE_REUSED', 'this nonce was already used with another message');
    const account = await findOrCreateWalletAccount(this.deps.db, checked.address);
    const signIn: WalletSignIn = {
      accountId: account.id,
      walletAddress: checked.address.toLowerCase(),
      domain: checked.domain,
      expiresAt: checked.expiresAt,
    };
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.evict(now);
    this.cache.set(key, signIn);
    return signIn;
  }

  /** Forgets every verified header (tests, and a change of domains). */
  clear(): void {
    this.cache.clear();
  }

  private async signatureValid(checked: CheckedSignIn): Promise<boolean> {
    const { address, message, signature } = checked;
    try {
      if (await verifyMessage({ address, message, signature })) return true;
    } catch {
      // A signature that is not 65 bytes is no EOA's; a contract wallet's may still be valid below.
    }
    if (!this.verifyOnChain) return false;
    try {
      return await this.verifyOnChain({ address, message, signature });
    } catch {
      return false;
    }
  }

  /** Drops expired entries, then the oldest quarter if that freed too little. */
  private evict(now: number): void {
    for (const [key, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(key);
    if (this.cache.size < CACHE_MAX_ENTRIES * 0.9) return;
    let drop = Math.ceil(this.cache.size / 4);
    for (const key of this.cache.keys()) {
      if (drop-- <= 0) break;
      this.cache.delete(key);
    }
  }
}
