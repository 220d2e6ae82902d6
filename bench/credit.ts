import { spawn } from 'node:child_process';

/**
 * Credits the bootstrap admin's account with `usd` through the operator CLI (`accounts credit`), as an operator
 * would; `env` says which data directory or database. Resolves when the command has exited.
 */
export async function creditAdmin(options: {
  readonly root: string;
  readonly adminKey: string;
  readonly usd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly stdio?: 'ignore' | 'inherit';
}): Promise<void> {
  const args = ['accounts', 'credit', '--key', options.adminKey, '--currency', 'USD', '--amount', options.usd];
  const credit = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: options.root,
    env: options.env,
    stdio: options.stdio ?? 'inherit',
  });
  await new Promise((resolve) => credit.once('exit', resolve));
}
