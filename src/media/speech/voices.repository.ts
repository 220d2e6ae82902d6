import type { Database } from '../../db/database.ts';

/** Cloned voices (table `voices`): reference samples by handle, owned by one account and one model. */

export interface StoredVoice {
  readonly id: string;
  readonly accountId: string;
  readonly modelId: string;
  readonly sample: Uint8Array;
  readonly sampleFormat: string;
  readonly sampleSeconds: number;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export type VoiceSummary = Omit<StoredVoice, 'sample' | 'accountId'>;

export async function insertVoice(db: Database, voice: StoredVoice): Promise<void> {
  await db
    .insertInto('voices')
    .values({
      id: voice.id,
      account_id: voice.accountId,
      model_id: voice.modelId,
      sample: voice.sample,
      sample_format: voice.sampleFormat,
      sample_seconds: voice.sampleSeconds,
      created_at: voice.createdAt,
      expires_at: voice.expiresAt,
    })
    .execute();
}

/** A voice that has not expired, whoever owns it (the caller checks the account and the model). */
export async function findVoice(db: Database, id: string, now: Date): Promise<StoredVoice | undefined> {
  const row = await db
    .selectFrom('voices')
    .selectAll()
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    accountId: row.account_id,
    modelId: row.model_id,
    // pg returns a Buffer, PGlite a Uint8Array.
    sample: row.sample,
    sampleFormat: row.sample_format,
    sampleSeconds: Number(row.sample_seconds),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** An account's live voices for one model, newest first. */
export function listVoices(
  db: Database,
  accountId: string,
  modelId: string,
  now: Date,
  limit = 100,
): Promise<VoiceSummary[]> {
  return listAccountVoices(db, accountId, now, { modelId, limit });
}

/** An account's live voices (of one model, or of every model), newest first. */
export async function listAccountVoices(
  db: Database,
  accountId: string,
  now: Date,
  options: { readonly modelId?: string; readonly limit?: number } = {},
): Promise<VoiceSummary[]> {
  let query = db
    .selectFrom('voices')
    .select(['id', 'model_id', 'sample_format', 'sample_seconds', 'created_at', 'expires_at'])
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now);
  if (options.modelId !== undefined) query = query.where('model_id', '=', options.modelId);
  const rows = await query
    .orderBy('created_at', 'desc')
    .limit(options.limit ?? 500)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    modelId: row.model_id,
    sampleFormat: row.sample_format,
    sampleSeconds: Number(row.sample_seconds),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  }));
}

/** Removes an account's expired voices (their samples are personal data past their retention). */
export async function deleteExpiredVoices(db: Database, accountId: string, now: Date): Promise<void> {
  await db.deleteFrom('voices').where('account_id', '=', accountId).where('expires_at', '<=', now).execute();
}

/**
 * Removes up to `limit` expired voices of every account (the periodic sweep: a voice's sample is personal data
 * and must not outlive its retention just because its account clones nothing more). Answers how many went.
 */
export async function sweepExpiredVoices(db: Database, now: Date, limit = 500): Promise<number> {
  const expired = db.selectFrom('voices').select('id').where('expires_at', '<=', now).limit(limit);
  const deleted = await db.deleteFrom('voices').where('id', 'in', expired).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
