import { describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { OperatorConfigError, parseOperatorConfig } from '../../src/operator-config/load.ts';
import { BreachLog } from '../../src/rate-limits/breach-log.ts';
import { effectiveLimits, RateLimitsConfigSchema } from '../../src/rate-limits/limits.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey, useTestServices } from '../helpers/services.ts';

describe('rate-limit resolution and the operator file', () => {
  const config = RateLimitsConfigSchema.parse({
    defaults: { text: { rpm: 100, tpm: 5000 }, image: { rpm: 3 } },
    models: { special: { rpm: 7 } },
  });

  it('takes each value from the key, then the model, then its type, then the built-in limits', () => {
    expect(effectiveLimits(config, { id: 'plain', type: 'text' }, null)).toEqual({
      rpm: 100,
      rpd: 50_000_000,
      tpm: 5000,
    });
    expect(effectiveLimits(config, { id: 'special', type: 'text' }, null)).toMatchObject({ rpm: 7, tpm: 5000 });
    expect(effectiveLimits(config, { id: 'special', type: 'text' }, { tpm: 9 })).toMatchObject({ rpm: 7, tpm: 9 });
    expect(effectiveLimits(config, { id: 'special', type: 'text' }, { rpm: 1 })).toMatchObject({ rpm: 1 });
    // No TPM on models not billed by tokens, whatever the key says.
    expect(effectiveLimits(config, { id: 'pic', type: 'image' }, { tpm: 10 })).toEqual({
      rpm: 3,
      rpd: 5_000_000,
      tpm: null,
    });
  });

  it('puts a tier between the model and its type, the key still over all', () => {
    const tiered = RateLimitsConfigSchema.parse({
      defaults: { text: { rpm: 100, tpm: 5000 } },
      tiers: { small: { models: ['little', 'special'], rpm: 50 }, large: { models: ['big'], rpm: 5, tpm: 900 } },
      models: { special: { rpm: 7 } },
    });
    expect(effectiveLimits(tiered, { id: 'little', type: 'text' }, null)).toMatchObject({ rpm: 50, tpm: 5000 });
    expect(effectiveLimits(tiered, { id: 'big', type: 'text' }, null)).toMatchObject({ rpm: 5, tpm: 900 });
    expect(effectiveLimits(tiered, { id: 'special', type: 'text' }, null)).toMatchObject({ rpm: 7 });
    expect(effectiveLimits(tiered, { id: 'plain', type: 'text' }, null)).toMatchObject({ rpm: 100 });
    expect(effectiveLimits(tiered, { id: 'big', type: 'text' }, { rpm: 60 })).toMatchObject({ rpm: 60, tpm: 900 });
  });

  it('validates the rateLimits section, naming the bad path', () => {
    const parsed = parseOperatorConfig({ rateLimits: { defaults: { text: { rpm: 10 } } } }, 'test.yaml');
    expect(parsed.rateLimits?.defaults.text).toEqual({ rpm: 10 });
    const bad = (rateLimits: unknown) => () => parseOperatorConfig({ rateLimits }, 'bad.yaml');
    expect(bad({ defaults: { text: { rpm: 0 } } })).toThrow(OperatorConfigError);
    expect(bad({ defaults: { text: { rpm: 1.5 } } })).toThrow(/rateLimits\.defaults\.text\.rpm/);
    expect(bad({ defaults: { hologram: { rpm: 1 } } })).toThrow(OperatorConfigError);
    expect(bad({ models: { m: { rps: 1 } } })).toThrow(/rps/);
    expect(bad({ tiers: { small: { rpm: 1 } } })).toThrow(/rateLimits\.tiers\.small\.models/);
    expect(bad({ tiers: { small: { models: ['m'], rps: 1 } } })).toThrow(/rps/);
    expect(bad({ tiers: { a: { models: ['m'] }, b: { models: ['n', 'm'] } } })).toThrow(
      /rateLimits\.tiers\.b\.models\[1\]: m is already in tier a/,
    );
    expect(bad({ tiers: { 'no spaces': { models: ['m'] } } })).toThrow(OperatorConfigError);
  });
});

describe(`rate-limit breach log (${testDatabaseKind})`, () => {
  const state = useTestServices();

  it('keeps the newest rows per account, pruned as it grows, and never another account’s', async () => {
    const { services, handle } = state;
    const mine = await createAccountWithKey(services);
    const theirs = await createAccountWithKey(services);
    const log = new BreachLog({ db: handle.db, retention: 50 });
    const breach = (modelId: string) => ({ apiKeyId: mine.keyId, modelId, tier: 'paid', type: 'RPM' as const });
    await log.record(theirs.accountId, { ...breach('other'), apiKeyId: theirs.keyId });
    for (let i = 0; i < 120; i += 1) await log.record(mine.accountId, breach(`m${i}`));
    const rows = await handle.db
      .selectFrom('rate_limit_breaches')
      .select(['account_id'])
      .where('account_id', '=', mine.accountId)
      .execute();
    // Pruned every 16th insert: between the 50 kept and 50 + 15 inserted since the last prune.
    expect(rows.length).toBeGreaterThanOrEqual(50);
    expect(rows.length).toBeLessThan(66);
    const recent = await log.recent(mine.accountId, 50);
    expect(recent.map((row) => row.modelId)).toEqual(Array.from({ length: 50 }, (_, i) => `m${119 - i}`));
    expect(await log.recent(theirs.accountId, 50)).toHaveLength(1);
  });

  it('clears a key override through the service, and rejects an empty one', async () => {
    const { services } = state;
    const { keyId } = await createAccountWithKey(services);
    await expect(services.apiKeys.setRateLimits(operator(), { id: keyId }, {})).rejects.toThrow(/at least one/);
    await expect(services.apiKeys.setRateLimits(operator(), { id: keyId }, { rpm: -1 })).rejects.toThrow();
    await expect(services.apiKeys.setRateLimits(operator(), { id: keyId }, { rpm: 4 })).resolves.toEqual({
      id: keyId,
      rateLimits: { rpm: 4 },
    });
    await expect(services.apiKeys.setRateLimits(operator(), { id: keyId }, null)).resolves.toEqual({
      id: keyId,
      rateLimits: null,
    });
  });
});
