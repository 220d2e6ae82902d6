import { sql } from 'kysely';
import type { Database } from '../db/database.ts';

/*
 * Seen sign-in nonces (table siwx_nonces): a nonce belongs to the first signed message seen with it until that
 * message expires. Kept in the database so every process refuses the same reuse; expired rows are swept.
 */

/**
 * Claims `nonce` for `messageHash` until `expiresAt`: true when it is this message's (new, the same message again, or
 * the earlier owner's message has expired), false when another message holds it.
 */
export async function claimNonce(db: Database, nonce: string, messageHash: string, expiresAt: Date): Promise<boolean> {
  const row = await db
    .insertInto('siwx_nonces')
    .values({ nonce, message_hash: messageHash, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .column('nonce')
        .doUpdateSet({ message_hash: messageHash, expires_at: expiresAt })
        .where(sql<boolean>`siwx_nonces.message_hash = ${messageHash} or siwx_nonces.expires_at <= now()`),
    )
    .returning('nonce')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes the nonces whose messages expired; the count deleted. */
export async function sweepNonces(db: Database, now = new Date()): Promise<number> {
  const result = await db.deleteFrom('siwx_nonces').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
