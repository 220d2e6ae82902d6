import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { operator } from '../auth/auth-context.ts';
import { AppError } from '../errors.ts';
import { PACKAGE_JSON } from '../runtime-files.ts';
import type { Operations } from '../services.ts';
import { addAccountCommands } from './account-commands.ts';
import { addCharacterCommands } from './character-commands.ts';
import { accountKey, type KeyInput } from './key-input.ts';
import { addOperatorTokenCommands } from './operator-token-commands.ts';
import { addRateLimitCommands } from './rate-limit-commands.ts';
import { addWalletCommands } from './wallet-commands.ts';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Where `--key -` and LAGOON_ADMIN_KEY read the key from (none: `--key <secret>` only). */
  keys?: KeyInput;
}

/** The services commands act on, or how to open them: called only once a command runs, never for help. */
export type OperationsSource = Operations | (() => Promise<Operations>);

/**
 * The operator CLI (`npm run lagoon -- …`). It acts as the operator, outside any account's permissions, on
 * the services it is given: its own database connection, or a running server's through the control socket.
 */
export async function runCli(argv: readonly string[], source: OperationsSource, io: CliIo): Promise<number> {
  let opened: Promise<Operations> | undefined;
  const open = () => (opened ??= typeof source === 'function' ? source() : Promise.resolve(source));
  const program = buildProgram(open, io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    io.err(`lagoon: ${error instanceof AppError || error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/**
 * Runs a command line that needs no services (help, --version, a usage error) and returns its answer; undefined
 * when the command would act, so the caller opens the services (or finds a server) only then.
 */
export async function answerWithoutServices(argv: readonly string[]): Promise<CliAnswer | undefined> {
  let acts = false;
  const answer: CliAnswer = { exitCode: 0, stdout: '', stderr: '' };
  answer.exitCode = await runCli(
    argv,
    () => {
      acts = true;
      return Promise.reject(new Error('not opened'));
    },
    { out: (s) => (answer.stdout += s), err: (s) => (answer.stderr += s) },
  );
  return acts ? undefined : answer;
}

export interface CliAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const version = (): string => (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;

function buildProgram(open: () => Promise<Operations>, io: CliIo): Command {
  const op = operator('cli');
  const print = (asJson: boolean | undefined, data: unknown, text: string) =>
    io.out(asJson ? `${JSON.stringify(data, null, 2)}\n` : `${text}\n`);
  const program = new Command('lagoon')
    .description('Lagoon operator commands')
    .version(version())
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });

  addAccountCommands(program, open, op, io.keys, print);
  addCharacterCommands(program, open, op, print);

  const keys = program.command('keys').description('API keys');
  keys
    .command('create')
    .description('Create an API key for an account')
    .requiredOption('--account <id>', 'account id')
    .addOption(new Option('--type <type>', 'key type').choices(['ADMIN', 'INFERENCE']).makeOptionMandatory())
    .option('--description <text>', 'description (at most 64 characters)')
    .option('--json', 'print JSON only')
    .action(async (opts: { account: string; type: 'ADMIN' | 'INFERENCE'; description?: string; json?: boolean }) => {
      const services = await open();
      const created = await services.accounts.createKey(op, opts.account, {
        apiKeyType: opts.type,
        description: opts.description ?? `${opts.type.toLowerCase()} key`,
      });
      print(
        opts.json,
        {
          id: created.key.id,
          accountId: created.key.accountId,
          apiKey: created.secret,
          apiKeyType: created.key.apiKeyType,
          description: created.key.description,
        },
        `${created.key.apiKeyType} key ${created.key.id} for account ${created.key.accountId} (shown once): ${created.secret}`,
      );
    });

  addRateLimitCommands(keys, open, op, io.keys, print);

  program
    .command('rpc-tier')
    .description(
      'Set the crypto RPC caps tier of an account: standard (100 requests/min, 10M credits/24 h) or staff (1000, 100M)',
    )
    .addOption(new Option('--account <id>', 'account id').conflicts('key'))
    .addOption(
      new Option('--key <apiKey>', 'an API key of the account (- reads it from stdin; default: $LAGOON_ADMIN_KEY)'),
    )
    .addOption(new Option('--tier <tier>', 'caps tier').choices(['standard', 'staff']).makeOptionMandatory())
    .option('--json', 'print JSON only')
    .action(async (opts: { account?: string; key?: string; tier: string; json?: boolean }) => {
      const services = await open();
      const key = await accountKey(opts, io.keys);
      const accountId = opts.account ?? (await services.accounts.accountIdForKey(op, key ?? ''));
      const tier = await services.cryptoRpc.setTier(op, accountId, opts.tier);
      print(opts.json, { accountId, rpcTier: tier }, `Account ${accountId}: crypto RPC tier ${tier}`);
    });

  addWalletCommands(program, open, op, print);
  addOperatorTokenCommands(program, open, op, print);
  return program;
}
