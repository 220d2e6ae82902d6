import type { Database } from '../db/database.ts';

export async function insertAccount(
  db: Database,
  values: { name: string; kind?: 'standard' | 'wallet'; walletAddress?: string | null },
) {
  return db
    .insertInto('accounts')
    .values({ name: values.name, kind: values.kind ?? 'standard', wallet_address: values.walletAddress ?? null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listAccounts(db: Database) {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function getAccount(db: Database, id: string) {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countAccounts(db: Database): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function getMeta(db: Database, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('instance_meta').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setMetaIfAbsent(db: Database, key: string, value: string): Promise<boolean> {
  const result = await db
    .insertInto('instance_meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/**
 * The account of a wallet, created on first use. Addresses are stored lower-case so the checksummed and plain
 * spellings of one wallet are one account; concurrent first uses create it once (the address is unique).
 */
export async function findOrCreateWalletAccount(db: Database, address: string) {
  const walletAddress = address.toLowerCase();
  const existing = await db
    .selectFrom('accounts')
    .selectAll()
    .where('wallet_address', '=', walletAddress)
    .executeTakeFirst();
  if (existing) return existing;
  await db
    .insertInto('accounts')
    .values({ name: `wallet ${walletAddress}`, kind: 'wallet', wallet_address: walletAddress })
    .onConflict((oc) => oc.column('wallet_address').doNothing())
    .execute();
  return db.selectFrom('accounts').selectAll().where('wallet_address', '=', walletAddress).executeTakeFirstOrThrow();
}
