import type { Account as AccountRecord } from '../../src/accounts/account.service.ts';
import type { BalanceSnapshot } from '../../src/billing/billing.types.ts';
import { formatNano } from '../../src/billing/money.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';

export const Balance = builder.objectRef<BalanceSnapshot>('Balance').implement({
  fields: (t) => ({
    currency: t.field({ type: CurrencyEnum, resolve: (b) => b.currency }),
    amount: t.field({ type: 'Decimal', description: 'Total balance.', resolve: (b) => formatNano(b.amount) }),
    reserved: t.field({
      type: 'Decimal',
      description: 'Held for requests in flight.',
      resolve: (b) => formatNano(b.reserved),
    }),
    available: t.field({ type: 'Decimal', resolve: (b) => formatNano(b.amount - b.reserved) }),
  }),
});

const Account = builder.objectRef<AccountRecord>('Account').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    createdAt: t.field({ type: 'DateTime', resolve: (a) => a.createdAt }),
    balances: t.field({
      type: [Balance],
      description: 'ADMIN keys only, like `balance`.',
      authScopes: { admin: true },
      resolve: (_account, _args, context) => context.services.accounts.balances(context.auth),
    }),
  }),
});

builder.queryFields((t) => ({
  account: t.field({
    type: Account,
    description: 'The account of the calling key (its balances need an ADMIN key).',
    authScopes: { account: true },
    resolve: (_root, _args, context) => context.services.accounts.current(context.auth),
  }),
}));
