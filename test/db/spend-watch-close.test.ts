import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.ts';
import { SpendWatch } from '../../src/webhooks/spend-watch.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createTestApp } from '../helpers/app.ts';

/*
 * At shutdown the spend watch finishes the checks it noted and takes no more (src/webhooks/webhook.wiring.ts closes
 * it before the queue and the database): a settlement written during the drain must not start a check against a
 * closed database ("driver has already been destroyed", logged at every shutdown under load before).
 */
describe(`the spend watch at shutdown (${testDatabaseKind})`, () => {
  it('finishes the checks noted before close, and starts none after it', async () => {
    const t = await createTestApp();
    const warnings: string[] = [];
    const logger = { warn: (_fields: unknown, message: string) => warnings.push(message) } as unknown as Logger;
    const watch = new SpendWatch({
      db: t.app.database.db,
      logger,
      emitter: { emitLater: () => undefined },
      usdBalanceOf: async () => 0n,
    });
    const account = '00000000-0000-4000-8000-000000000001';
    watch.balanceChanged(account);
    await watch.close();
    await t.close();
    watch.balanceChanged(account);
    watch.usageSettled([]);
    await watch.idle();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(warnings).toEqual([]);
  });
});
