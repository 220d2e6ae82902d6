import { isNonNullType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { schema } from '../../schema/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { scenarioAccount } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { creditWallet, newWallet, signInHeader } from '../helpers/wallets.ts';

type AnyField = GraphQLField<unknown, unknown>;

/** Every root field that takes the operator scope, read from the schema: a new one is guarded-tested here at once. */
function operatorFields(): { operation: 'query' | 'mutation'; field: AnyField }[] {
  const roots: ['query' | 'mutation', GraphQLObjectType | null | undefined][] = [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
  ];
  return roots.flatMap(([operation, type]) =>
    Object.values(type?.getFields() ?? {})
      .filter((field) => {
        const options = field.extensions.pothosOptions as { authScopes?: { operator?: boolean } } | undefined;
        return options?.authScopes?.operator === true || field.name.startsWith('operator');
      })
      .map((field) => ({ operation, field })),
  );
}

const ARG_VALUES: Record<string, string> = {
  accountId: '"00000000-0000-4000-8000-000000000000"',
  currency: 'USD',
  amount: '"1"',
  reason: '"guard test"',
};

function documentFor(operation: 'query' | 'mutation', field: AnyField): string {
  const args = field.args
    .filter((arg) => isNonNullType(arg.type))
    .map((arg) => {
      const value = ARG_VALUES[arg.name];
      if (value === undefined) throw new Error(`no test value for required argument ${field.name}(${arg.name})`);
      return `${arg.name}: ${value}`;
    });
  // Every operator field answers an object (or a list of them): __typename is always a valid selection.
  return `${operation} { ${field.name}${args.length ? `(${args.join(', ')})` : ''} { __typename } }`;
}

describe(`GraphQL operator fields refuse every credential but an operator token (${testDatabaseKind})`, () => {
  let t: TestApp;
  /** The code tells an authenticated account caller (refused: UNAUTHORIZED) from a refused credential. */
  const credentials: { name: string; headers: Record<string, string>; code: string }[] = [];
  let accountId = '';

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_SIWE_DOMAINS: 'lagoon.test' });
    const account = await scenarioAccount(t.app.services, 'guarded');
    accountId = account.accountId;
    ARG_VALUES.accountId = `"${accountId}"`;
    const revoked = await t.app.services.operatorTokens.create(operator(), { name: 'revoked' });
    await t.app.services.operatorTokens.revoke(operator(), revoked.token.id);
    const wallet = newWallet();
    await creditWallet(t.app, wallet.address, '1');
    credentials.push(
      { name: 'no credentials', headers: {}, code: 'AUTHENTICATION_FAILED' },
      { name: 'ADMIN key', headers: { authorization: `Bearer ${account.adminSecret}` }, code: 'UNAUTHORIZED' },
      { name: 'INFERENCE key', headers: { authorization: `Bearer ${account.inferenceSecret}` }, code: 'UNAUTHORIZED' },
      {
        name: 'bootstrap ADMIN key',
        headers: { authorization: 'Bearer test-bootstrap-admin-key' },
        code: 'UNAUTHORIZED',
      },
      {
        name: 'wallet sign-in',
        headers: { 'SIGN-IN-WITH-X': await signInHeader(wallet, { domain: 'lagoon.test' }) },
        code: 'UNAUTHORIZED',
      },
      {
        name: 'revoked operator token',
        headers: { authorization: `Bearer ${revoked.secret}` },
        code: 'AUTHENTICATION_FAILED',
      },
    );
  });
  afterAll(async () => t.close());

  it('finds the operator fields in the schema', () => {
    expect(operatorFields().map(({ field }) => field.name)).toEqual(
      expect.arrayContaining([
        'operatorAccounts',
        'operatorUsage',
        'operatorUpstreamHealth',
        'operatorJobQueue',
        'operatorCredit',
        'operatorDebit',
      ]),
    );
  });

  it('refuses each of them for every account credential, no credentials and a revoked token', async () => {
    for (const { operation, field } of operatorFields())
      for (const credential of credentials) {
        const response = await t.call('/graphql', {
          key: null,
          headers: { ...credential.headers, accept: 'application/graphql-response+json' },
          body: { query: documentFor(operation, field) },
        });
        const body = (await response.json()) as {
          data?: Record<string, unknown> | null;
          errors?: { extensions?: { code?: string } }[];
        };
        const where = `${field.name} with ${credential.name}`;
        expect(body.data?.[field.name] ?? null, where).toBeNull();
        expect(body.errors?.[0]?.extensions?.code, where).toBe(credential.code);
      }
    const balances = await t.app.services.billing.balancesOf(accountId);
    expect(balances.find((b) => b.currency === 'USD')?.amount).toBe(5_000_000_000n);
  });

  it('refuses an operator token on the REST surface', async () => {
    const { secret } = await t.app.services.operatorTokens.create(operator(), { name: 'rest' });
    const response = await t.call('/api/v1/api_keys', { key: secret });
    expect(response.status).toBe(401);
  });
});
