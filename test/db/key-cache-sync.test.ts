import { describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { twoProcesses } from '../helpers/processes.ts';
import { createAccountWithKey } from '../helpers/services.ts';

const REDIS_URL = process.env.REDIS_URL || undefined;

// Two sets of services on one database stand for two API processes; REDIS_URL is what connects their caches.
describe.skipIf(!REDIS_URL)(`Key cache invalidation across processes (${testDatabaseKind}, needs REDIS_URL)`, () => {
  const processes = twoProcesses(REDIS_URL);

  it('should stop a key revoked in one process from working in another at once, not after the cache TTL', async () => {
    const { first, second } = processes;
    const { secret, keyId, auth } = await createAccountWithKey(first, { type: 'ADMIN' });
    const credentials = { authorization: `Bearer ${secret}` };
    // The second process has the key cached (the TTL is 30 s in these options).
    await expect(second.auth.authenticate(credentials, 'r1')).resolves.toMatchObject({ kind: 'apiKey' });
    await expect(second.auth.authenticate(credentials, 'r2')).resolves.toMatchObject({ kind: 'apiKey' });
    await first.apiKeys.revoke(auth, keyId);
    await eventually(() =>
      expect(second.auth.authenticate(credentials, 'r3')).rejects.toMatchObject({ code: 'AUTHENTICATION_FAILED' }),
    );
  });

  it('should make an edited key (a new spend limit) take effect in the other process', async () => {
    const { first, second } = processes;
    const { secret, keyId, auth } = await createAccountWithKey(first, { type: 'ADMIN' });
    const credentials = { authorization: `Bearer ${secret}` };
    const before = await second.auth.authenticate(credentials, 'r1');
    expect(before.kind === 'apiKey' && before.apiKey.limits.usd).toBeNull();
    await first.apiKeys.update(auth, { id: keyId, consumptionLimit: { usd: 3 } });
    await eventually(async () => {
      const after = await second.auth.authenticate(credentials, 'r2');
      expect(after.kind === 'apiKey' && after.apiKey.limits.usd).toBe(3_000_000_000n);
    });
  });
});
