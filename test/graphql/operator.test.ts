import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { runCli } from '../../src/cli/program.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { chargeScenario, scenarioAccount } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface Body<T> {
  data?: T;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

const ADJUST = `mutation($accountId: ID!, $currency: Currency!, $amount: Decimal!, $reason: String!, $debit: Boolean!) {
  credit: operatorCredit(accountId: $accountId, currency: $currency, amount: $amount, reason: $reason) @skip(if: $debit) {
    __typename
    ... on MutationOperatorCreditSuccess { data { ledgerEntryId amount balanceAfter reason operatorTokenId } }
    ... on Error { code message }
  }
  debit: operatorDebit(accountId: $accountId, currency: $currency, amount: $amount, reason: $reason) @include(if: $debit) {
    __typename
    ... on MutationOperatorDebitSuccess { data { ledgerEntryId amount balanceAfter reason operatorTokenId } }
    ... on Error { code message }
  }
}`;

interface Adjusted {
  __typename: string;
  data?: { ledgerEntryId: string; amount: string; balanceAfter: string; reason: string; operatorTokenId: string };
  code?: string;
}

describe(`GraphQL operator operations with an operator token (${testDatabaseKind})`, () => {
  let t: TestApp;
  let token: string;
  let tokenId: string;
  let account: Awaited<ReturnType<typeof scenarioAccount>>;

  beforeAll(async () => {
    t = await createTestApp();
    account = await scenarioAccount(t.app.services, 'operated');
    await chargeScenario(t.app.services, account);
    await scenarioAccount(t.app.services, 'bystander');
    const created = await t.app.services.operatorTokens.create(operator(), { name: 'console' });
    token = created.secret;
    tokenId = created.token.id;
  });
  afterAll(async () => t.close());

  const adjust = async (debit: boolean, variables: Record<string, unknown>) => {
    const body: Body<{ credit?: Adjusted; debit?: Adjusted }> = await t.graphql(
      ADJUST,
      { accountId: account.accountId, currency: 'USD', reason: 'support ticket 42', debit, ...variables },
      token,
    );
    expect(body.errors).toBeUndefined();
    return (debit ? body.data?.debit : body.data?.credit) as Adjusted;
  };

  it('lists and searches every account with keys, balances and spend, page by page', async () => {
    const query = `query($search: String, $first: Int, $after: String) {
      operatorAccounts(search: $search, first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        edges { cursor node { id name activeKeyCount balances { currency amount } spendToday { currency amount } spendLast30Days { currency amount } } }
      }
    }`;
    type Page = {
      operatorAccounts: {
        pageInfo: { hasNextPage: boolean; endCursor: string };
        edges: { node: { id: string; name: string; activeKeyCount: number; spendLast30Days: { amount: string }[] } }[];
      };
    };
    const first: Body<Page> = await t.graphql(query, { first: 2 }, token);
    expect(first.errors).toBeUndefined();
    expect(first.data?.operatorAccounts.edges).toHaveLength(2);
    expect(first.data?.operatorAccounts.pageInfo.hasNextPage).toBe(true);
    const rest: Body<Page> = await t.graphql(
      query,
      { first: 10, after: first.data?.operatorAccounts.pageInfo.endCursor },
      token,
    );
    const names = [...(first.data?.operatorAccounts.edges ?? []), ...(rest.data?.operatorAccounts.edges ?? [])].map(
      (e) => e.node.name,
    );
    expect(names.sort()).toEqual(['bootstrap', 'bystander', 'operated']);

    const byKey: Body<Page> = await t.graphql(query, { search: account.inferenceKeyId }, token);
    const found = byKey.data?.operatorAccounts.edges ?? [];
    expect(found.map((e) => e.node.id)).toEqual([account.accountId]);
    expect(found[0]?.node.activeKeyCount).toBe(2);
    expect(found[0]?.node.spendLast30Days.length).toBeGreaterThan(0);
    const byName: Body<Page> = await t.graphql(query, { search: 'bystand' }, token);
    expect(byName.data?.operatorAccounts.edges.map((e) => e.node.name)).toEqual(['bystander']);
  });

  it('credits and debits with a reason; the ledger records both exactly, with the token', async () => {
    const before = (await t.app.services.billing.balancesOf(account.accountId)).find((b) => b.currency === 'USD');
    const credited = await adjust(false, { amount: '2.000000001' });
    expect(credited.data).toMatchObject({
      amount: '2.000000001',
      reason: 'support ticket 42',
      operatorTokenId: tokenId,
    });
    const debited = await adjust(true, { amount: '0.5' });
    expect(debited.data?.amount).toBe('-0.5');
    const after = (await t.app.services.billing.balancesOf(account.accountId)).find((b) => b.currency === 'USD');
    expect(after?.amount).toBe((before?.amount ?? 0n) + 2_000_000_001n - 500_000_000n);
    const rows = await t.app.database.db
      .selectFrom('account_ledger')
      .select(['id', 'amount', 'note', 'operator_token_id', 'balance_after'])
      .where('id', 'in', [credited.data?.ledgerEntryId ?? '', debited.data?.ledgerEntryId ?? ''])
      .orderBy('seq')
      .execute();
    expect(rows.map((r) => [r.amount, r.note, r.operator_token_id])).toEqual([
      [2_000_000_001n, 'support ticket 42', tokenId],
      [-500_000_000n, 'support ticket 42', tokenId],
    ]);
    expect(rows[1]?.balance_after).toBe(after?.amount);
  });

  it('answers typed errors: unknown account, bad amount, a debit past the balance', async () => {
    const unknown = await adjust(false, { amount: '1', accountId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown).toMatchObject({ __typename: 'NotFoundError' });
    // Text that is no decimal at all is refused by the Decimal scalar before the field runs.
    for (const amount of ['-1', '0', '-0.5'])
      expect(await adjust(false, { amount }), amount).toMatchObject({ __typename: 'ValidationError' });
    const before = await t.app.services.billing.balancesOf(account.accountId);
    const past = await adjust(true, { amount: '1000000' });
    expect(past).toMatchObject({ __typename: 'InsufficientBalanceError', code: 'INSUFFICIENT_BALANCE' });
    expect(await adjust(false, { amount: '1', reason: '  ' })).toMatchObject({ __typename: 'ValidationError' });
    expect(await t.app.services.billing.balancesOf(account.accountId)).toEqual(before);
  });

  it('reads usage across accounts, upstream health and the job queue', async () => {
    const body: Body<{
      operatorUsage: { totals: unknown };
      mine: { totals: unknown };
      operatorUpstreamHealth: { providerId: string; state: string; recentErrors: unknown[] }[];
      operatorJobQueue: { queued: number; processing: number; oldestWaitingSeconds: number | null; depth: unknown[] };
    }> = await t.graphql(
      `{ operatorUsage(lookback: "30d") { __typename }
         operatorUpstreamHealth { providerId state coolingDownUntil calls failures recentLatencyMs recentErrors { message } }
         operatorJobQueue { queued processing oldestWaitingSeconds depth { status kind modelId jobs } } }`,
      {},
      token,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.operatorUpstreamHealth.map((h) => h.providerId)).toContain('simulator');
    expect(body.data?.operatorUpstreamHealth.every((h) => h.state === 'HEALTHY')).toBe(true);
    expect(body.data?.operatorJobQueue).toEqual({ queued: 0, processing: 0, oldestWaitingSeconds: null, depth: [] });

    // Only one account was charged: the sums over every account are that account's own analytics.
    const fields = 'byKey { apiKeyId description totalUsd totalDiem } byModel { modelName totalUsd } topModels';
    const all: Body<{ operatorUsage: unknown }> = await t.graphql(
      `{ operatorUsage(lookback: "30d") { ${fields} } }`,
      {},
      token,
    );
    const own: Body<{ usageAnalytics: unknown }> = await t.graphql(
      `{ usageAnalytics(lookback: "30d") { ${fields} } }`,
      {},
      account.adminSecret,
    );
    expect(all.errors).toBeUndefined();
    expect(all.data?.operatorUsage).toEqual(own.data?.usageAnalytics);
    expect(JSON.stringify(all.data?.operatorUsage)).toContain(account.inferenceKeyId);
  });
});

describe(`CLI operator tokens (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const cli = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, t.app.services, { out: (s) => (out += s), err: (s) => (err += s) });
    return { code, out, err };
  };

  it('creates a token whose secret is printed once, lists it without it, and revokes it', async () => {
    const created = await cli('operator-tokens', 'create', '--name', 'console', '--json');
    expect(created.code).toBe(0);
    const { id, token } = JSON.parse(created.out) as { id: string; token: string };
    expect(token).toMatch(/^lagoonop_/);
    const query = '{ operatorJobQueue { queued } }';
    expect((await t.graphql(query, {}, token)).data).toEqual({ operatorJobQueue: { queued: 0 } });

    const listed = await cli('operator-tokens', 'list', '--json');
    expect(listed.out).not.toContain(token);
    expect(JSON.parse(listed.out)).toMatchObject([{ id, name: 'console', revokedAt: null }]);

    expect((await cli('operator-tokens', 'revoke', id)).code).toBe(0);
    const refused = await t.graphql(query, {}, token);
    expect(refused.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
    expect((await cli('operator-tokens', 'revoke', id)).code).toBe(1);
    expect(JSON.parse((await cli('operator-tokens', 'list', '--json')).out)[0].revokedAt).not.toBeNull();
  });
});
