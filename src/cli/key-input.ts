/**
 * Where a command's API key comes from besides `--key <secret>` on the command line, which npm echoes and shell
 * history keeps: `--key -` reads it from standard input, and LAGOON_ADMIN_KEY stands in for `--key` on commands
 * that name an account by one of its keys.
 */
export interface KeyInput {
  /** LAGOON_ADMIN_KEY. */
  readonly fromEnv?: string | undefined;
  /** Standard input, read once (the first non-empty line). */
  readonly fromStdin?: () => Promise<string>;
}

/** The `--key` value that means "read the key from standard input". */
export const KEY_FROM_STDIN = '-';

/** `--key`'s value, with `-` replaced by the key read from standard input. */
export async function givenKey(key: string | undefined, input: KeyInput | undefined): Promise<string | undefined> {
  if (key !== KEY_FROM_STDIN) return key;
  if (!input?.fromStdin) throw new Error('--key -: no standard input to read the key from');
  return input.fromStdin();
}

/**
 * The key that names the account when `--account` does not: `--key <secret>`, `--key -`, else LAGOON_ADMIN_KEY.
 * Throws when there is neither an account nor a key.
 */
export async function accountKey(
  opts: { account?: string; key?: string },
  input: KeyInput | undefined,
): Promise<string | undefined> {
  if (opts.account) return undefined;
  const key = (await givenKey(opts.key, input)) ?? input?.fromEnv;
  if (!key)
    throw new Error('Give --account <id> or --key <apiKey> (--key - reads it from stdin; or set LAGOON_ADMIN_KEY)');
  return key;
}

/** The key in text read from standard input: its first non-empty line, trimmed. */
export function keyFromText(text: string): string {
  const key = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .find((line) => line.length > 0);
  if (!key) throw new Error('--key -: standard input held no key');
  return key;
}

/** Whether a command line asks for its key on standard input (`--key -` or `--key=-`). */
export const asksKeyOnStdin = (argv: readonly string[]): boolean =>
  argv.some((arg, i) => arg === `--key=${KEY_FROM_STDIN}` || (arg === KEY_FROM_STDIN && argv[i - 1] === '--key'));
