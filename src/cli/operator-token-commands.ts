import type { Command } from 'commander';
import type { AuthContext } from '../auth/auth-context.ts';
import type { OperatorToken } from '../operator/operator-tokens.ts';
import type { Operations } from '../services.ts';

type Print = (asJson: boolean | undefined, data: unknown, text: string) => void;

const tokenData = (token: OperatorToken) => ({
  id: token.id,
  name: token.name,
  last6: token.last6,
  createdAt: token.createdAt.toISOString(),
  lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
  revokedAt: token.revokedAt?.toISOString() ?? null,
});

/** `operator-tokens create|list|revoke`: the credential of the GraphQL operator operations (docs/operations.md). */
export function addOperatorTokenCommands(
  program: Command,
  open: () => Promise<Operations>,
  op: AuthContext,
  print: Print,
): void {
  const tokens = program
    .command('operator-tokens')
    .description('Operator tokens: the credential of the GraphQL operator operations');
  tokens
    .command('create')
    .description('Create an operator token (its secret is shown once)')
    .requiredOption('--name <name>', 'who or what uses it (1 to 64 characters)')
    .option('--json', 'print JSON only')
    .action(async (opts: { name: string; json?: boolean }) => {
      const { token, secret } = await (await open()).operatorTokens.create(op, { name: opts.name });
      print(
        opts.json,
        { ...tokenData(token), token: secret },
        `Operator token ${token.id} (${token.name}), shown once: ${secret}`,
      );
    });
  tokens
    .command('list')
    .description('List operator tokens (never their secrets)')
    .option('--json', 'print JSON only')
    .action(async (opts: { json?: boolean }) => {
      const list = await (await open()).operatorTokens.list(op);
      const text =
        list.length === 0
          ? 'No operator tokens.'
          : list
              .map(
                (t) =>
                  `${t.id}  ${t.name.padEnd(20)}  …${t.last6}  ${t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : 'active'}`,
              )
              .join('\n');
      print(opts.json, list.map(tokenData), text);
    });
  tokens
    .command('revoke')
    .description('Revoke an operator token: it is refused from its next call on')
    .argument('<id>', 'operator token id')
    .option('--json', 'print JSON only')
    .action(async (id: string, opts: { json?: boolean }) => {
      const token = await (await open()).operatorTokens.revoke(op, id);
      print(opts.json, tokenData(token), `Operator token ${token.id} (${token.name}) revoked`);
    });
}
