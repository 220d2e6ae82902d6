import { loadConfig } from '../../src/config.ts';
import { testLogger } from './test-logs.ts';
import { operator, type AuthContext } from '../../src/auth/auth-context.ts';
import { afterAll, beforeAll } from 'vitest';
import { createServices, type Services } from '../../src/services.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import type { Database } from '../../src/db/database.ts';
import type { ApiKeyType } from '../../src/auth/auth-context.ts';

/** The defaults of an empty environment, for what the tests do not set themselves. */
const defaults = loadConfig({});

export const testServiceOptions = {
  x402: defaults.x402,
  http: defaults.http,
  auth: { keyCacheTtlMs: 30_000, lastUsedFlushMs: 60_000, maxKeysPerAccount: 500 },
  billing: { reservationTimeoutMs: 60_000, sweepIntervalMs: 60_000, balanceLeases: true },
};

/** Services as the server wires them; `balanceLeases: false` holds and settles every call in the database. */
export function createTestServices(db: Database, options: { balanceLeases?: boolean } = {}): Services {
  return createServices(db, testLogger(), {
    ...testServiceOptions,
    billing: { ...testServiceOptions.billing, balanceLeases: options.balanceLeases ?? true },
  });
}

/** A funded account with a key, authenticated the way a request would be. */
export async function createAccountWithKey(
  services: Services,
  options: {
    name?: string;
    type?: ApiKeyType;
    credit?: Partial<Record<'USD' | 'DIEM' | 'VCU' | 'BUNDLED_CREDITS', string>>;
    keyInput?: Record<string, unknown>;
  } = {},
): Promise<{ accountId: string; secret: string; keyId: string; auth: AuthContext; adminSecret: string }> {
  const op = operator();
  const { account, adminKey } = await services.accounts.create(op, { name: options.name ?? 'test account' });
  for (const [currency, amount] of Object.entries(options.credit ?? {})) {
    if (amount) await services.accounts.credit(op, { accountId: account.id, currency, amount });
  }
  let secret = adminKey.secret;
  if (options.type === 'INFERENCE' || options.keyInput) {
    const adminAuth = await services.auth.authenticate({ authorization: `Bearer ${adminKey.secret}` }, 'setup');
    const created = await services.apiKeys.create(adminAuth, {
      apiKeyType: options.type ?? 'INFERENCE',
      description: 'test key',
      ...options.keyInput,
    });
    secret = created.secret;
  }
  const auth = await services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'req');
  if (auth.kind !== 'apiKey') throw new Error('expected an API key context');
  return { accountId: account.id, secret, keyId: auth.apiKey.id, auth, adminSecret: adminKey.secret };
}

/** A fresh test database and services for a describe block: made before its tests, closed and dropped after them. */
export function useTestServices(): { readonly handle: TestDatabase; readonly services: Services } {
  const state = {} as { handle: TestDatabase; services: Services };
  beforeAll(async () => {
    state.handle = await createTestDatabase();
    state.services = createTestServices(state.handle.db);
  });
  afterAll(async () => {
    await state.services.stop();
    await state.handle.drop();
  });
  return state;
}
