import type { Database } from '../db/database.ts';
import type { JsonObject } from '../providers/chat/chat-engine.ts';

/* Stored responses (table `responses`, migrations/0016_responses.ts). */

export interface StoredResponse {
  readonly id: string;
  readonly accountId: string;
  readonly modelId: string;
  /** The conversation as chat messages, up to and including this response's output. */
  readonly history: JsonObject[];
  readonly response: JsonObject;
}

export async function insertResponse(db: Database, stored: StoredResponse): Promise<void> {
  await db
    .insertInto('responses')
    .values({
      id: stored.id,
      account_id: stored.accountId,
      model_id: stored.modelId,
      history: JSON.stringify(stored.history),
      response: JSON.stringify(stored.response),
    })
    .execute();
}

/** The response of this account with this id; another account's reads as absent. */
export async function findResponse(db: Database, accountId: string, id: string): Promise<StoredResponse | undefined> {
  const row = await db
    .selectFrom('responses')
    .select(['id', 'account_id', 'model_id', 'history', 'response'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) return undefined;
  const parse = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as unknown;
  return {
    id: row.id,
    accountId: row.account_id,
    modelId: row.model_id,
    history: parse(row.history) as JsonObject[],
    response: parse(row.response) as JsonObject,
  };
}

export async function deleteResponse(db: Database, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('responses')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
