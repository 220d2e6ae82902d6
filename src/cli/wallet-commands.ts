import type { Command } from 'commander';
import type { AuthContext } from '../auth/auth-context.ts';
import { formatNano, parseNano } from '../billing/money.ts';
import { ValidationError } from '../errors.ts';
import type { Operations } from '../services.ts';

type Print = (asJson: boolean | undefined, data: unknown, text: string) => void;

/** `wallets list | show <address> | refund <address> <usd>`: wallet callers' accounts (src/wallets/). */
export function addWalletCommands(
  program: Command,
  open: () => Promise<Operations>,
  op: AuthContext,
  print: Print,
): void {
  const wallets = program.command('wallets').description('Wallet callers (sign-in with a wallet, x402 top-ups)');

  wallets
    .command('list')
    .description('List wallet accounts with their USD credit')
    .option('--json', 'print JSON only')
    .action(async (opts: { json?: boolean }) => {
      const list = await (await open()).wallets.list(op);
      const data = list.map((w) => ({
        accountId: w.accountId,
        walletAddress: w.walletAddress,
        createdAt: w.createdAt.toISOString(),
        balanceUsd: formatNano(w.balance),
      }));
      const text =
        list.length === 0
          ? 'No wallet accounts.'
          : list.map((w) => `${w.walletAddress}  ${w.accountId}  USD=${formatNano(w.balance)}`).join('\n');
      print(opts.json, data, text);
    });

  wallets
    .command('show')
    .description("A wallet's credit and latest ledger entries")
    .argument('<address>', '0x wallet address')
    .option('--limit <n>', 'ledger entries to show (1 to 100)', '20')
    .option('--json', 'print JSON only')
    .action(async (address: string, opts: { limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ValidationError('--limit must be 1 to 100');
      const { balance, ledger } = await (await open()).wallets.show(op, address, { limit, offset: 0 });
      const lines = ledger.transactions.map(
        (e) =>
          `${e.createdAt}  ${e.type.padEnd(7)}  ${String(e.amount).padStart(14)}  → ${e.balanceAfter}  ${e.modelId}`,
      );
      print(
        opts.json,
        { balance, ledger },
        [`${balance.walletAddress}: ${balance.balanceUsd} USD`, ...lines].join('\n'),
      );
    });

  wallets
    .command('refund')
    .description('Give a wallet USD credit back (a REFUND ledger entry)')
    .argument('<address>', '0x wallet address')
    .argument('<usd>', 'decimal amount, e.g. 2.5')
    .option('--note <text>', 'note kept in the ledger')
    .option('--json', 'print JSON only')
    .action(async (address: string, usd: string, opts: { note?: string; json?: boolean }) => {
      let amount: bigint;
      try {
        amount = parseNano(usd);
      } catch {
        throw new ValidationError(`"${usd}" is not a decimal amount`);
      }
      const result = await (await open()).wallets.refund(op, address, amount, opts.note);
      print(
        opts.json,
        {
          walletAddress: address.toLowerCase(),
          amount: formatNano(result.amount),
          balance: formatNano(result.balanceAfter),
          ledgerEntryId: result.ledgerEntryId,
        },
        `Refunded ${formatNano(result.amount)} USD to ${address.toLowerCase()}; balance ${formatNano(result.balanceAfter)} USD`,
      );
    });
}
