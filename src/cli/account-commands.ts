import { Option, type Command } from 'commander';
import type { AuthContext } from '../auth/auth-context.ts';
import { CURRENCIES, formatNano, nanoToNumber } from '../billing/money.ts';
import type { Operations } from '../services.ts';
import { accountKey, type KeyInput } from './key-input.ts';

type Print = (asJson: boolean | undefined, data: unknown, text: string) => void;

/** `lagoon accounts create|list|credit`: accounts, their first ADMIN key and their balances. */
export function addAccountCommands(
  program: Command,
  open: () => Promise<Operations>,
  op: AuthContext,
  keyInput: KeyInput | undefined,
  print: Print,
): void {
  const accounts = program.command('accounts').description('Accounts and their balances');
  accounts
    .command('create')
    .description('Create an account and its first ADMIN key')
    .requiredOption('--name <name>', 'account name')
    .option('--json', 'print JSON only')
    .action(async (opts: { name: string; json?: boolean }) => {
      const services = await open();
      const { account, adminKey } = await services.accounts.create(op, { name: opts.name });
      print(
        opts.json,
        {
          account: { id: account.id, name: account.name, createdAt: account.createdAt.toISOString() },
          adminKey: { id: adminKey.key.id, apiKey: adminKey.secret, apiKeyType: 'ADMIN' },
        },
        `Account ${account.id} (${account.name})\nADMIN key (shown once): ${adminKey.secret}`,
      );
    });

  accounts
    .command('list')
    .description('List accounts with their balances')
    .option('--json', 'print JSON only')
    .action(async (opts: { json?: boolean }) => {
      const services = await open();
      const list = await services.accounts.list(op);
      const data = list.map((a) => ({
        id: a.id,
        name: a.name,
        kind: a.kind,
        createdAt: a.createdAt.toISOString(),
        balances: Object.fromEntries(a.balances.map((b) => [b.currency, nanoToNumber(b.amount)])),
        balancesDecimal: Object.fromEntries(a.balances.map((b) => [b.currency, formatNano(b.amount)])),
      }));
      const text =
        list.length === 0
          ? 'No accounts.'
          : list
              .map(
                (a) =>
                  `${a.id}  ${a.name.padEnd(20)}  ${a.balances.map((b) => `${b.currency}=${formatNano(b.amount)}`).join('  ')}`,
              )
              .join('\n');
      print(opts.json, data, text);
    });

  addCreditCommand(accounts, open, op, keyInput, print);
}

/** `lagoon accounts credit`: funds added (or removed) by the operator, kept in the ledger. */
function addCreditCommand(
  accounts: Command,
  open: () => Promise<Operations>,
  op: AuthContext,
  keyInput: KeyInput | undefined,
  print: Print,
): void {
  accounts
    .command('credit')
    .description('Add funds to an account (a negative amount removes them)')
    .addOption(new Option('--account <id>', 'account id').conflicts('key'))
    .addOption(
      new Option('--key <apiKey>', 'an API key of the account (- reads it from stdin; default: $LAGOON_ADMIN_KEY)'),
    )
    .addOption(new Option('--currency <currency>', 'currency').choices(CURRENCIES).makeOptionMandatory())
    .requiredOption('--amount <amount>', 'decimal amount, e.g. 12.5')
    .option('--note <text>', 'note kept in the ledger')
    .option('--json', 'print JSON only')
    .action(
      async (opts: {
        account?: string;
        key?: string;
        currency: string;
        amount: string;
        note?: string;
        json?: boolean;
      }) => {
        const services = await open();
        const key = await accountKey(opts, keyInput);
        const accountId = opts.account ?? (await services.accounts.accountIdForKey(op, key ?? ''));
        const result = await services.accounts.credit(op, {
          accountId,
          currency: opts.currency,
          amount: opts.amount,
          ...(opts.note ? { note: opts.note } : {}),
        });
        print(
          opts.json,
          {
            accountId,
            currency: result.currency,
            amount: nanoToNumber(result.amount),
            amountDecimal: formatNano(result.amount),
            balance: nanoToNumber(result.balanceAfter),
            balanceDecimal: formatNano(result.balanceAfter),
            ledgerEntryId: result.ledgerEntryId,
          },
          `Credited ${formatNano(result.amount)} ${result.currency} to ${accountId}; balance ${formatNano(result.balanceAfter)} ${result.currency}`,
        );
      },
    );
}
