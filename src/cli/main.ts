import { ConfigError, loadConfig } from '../config.ts';
import type { Services } from '../services.ts';
import { controlSocketPath, runViaControlSocket } from './control-socket.ts';
import { asksKeyOnStdin, keyFromText } from './key-input.ts';
import { answerWithoutServices, runCli } from './program.ts';

/**
 * `npm run lagoon -- <command>`: help, --version and usage errors straight from the command line; a command
 * through a running server's control socket if there is one, else on its own database connection.
 */
async function main(argv: string[]): Promise<number> {
  const offline = await answerWithoutServices(argv);
  if (offline) return print(offline);
  const config = loadConfig();
  let stdin: Promise<string> | undefined;
  const readStdinKey = () => (stdin ??= readStdin().then(keyFromText));
  if (!config.database.url) {
    const keys = { fromEnv: config.cliAdminKey, fromStdin: asksKeyOnStdin(argv) ? await readStdinKey() : undefined };
    const remote = await runViaControlSocket(controlSocketPath(config.database.dataDir), argv, keys);
    if (remote) return print(remote);
  }
  // Loaded only for a command that runs here: the services and the database are most of the CLI's start-up.
  const [{ openDatabase }, { migrateToLatest }, { createLogger }, { createServices }] = await Promise.all([
    import('../db/database.ts'),
    import('../db/migrate.ts'),
    import('../logger.ts'),
    import('../services.ts'),
  ]);
  const handle = await openDatabase({ url: config.database.url, dataDir: config.database.dataDir, poolSize: 2 });
  let services: Services | undefined;
  try {
    await migrateToLatest(handle.db);
    // Logs go to stderr: stdout carries the command's output (`--json` must stay parseable).
    services = createServices(handle.db, createLogger('warn', process.stderr), config);
    return await runCli(argv, services, {
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
      keys: { fromEnv: config.cliAdminKey, fromStdin: readStdinKey },
    });
  } finally {
    if (services) await services.stop();
    await handle.close();
  }
}

function print(answer: { exitCode: number; stdout: string; stderr: string }): number {
  process.stdout.write(answer.stdout);
  process.stderr.write(answer.stderr);
  return answer.exitCode;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(
    `lagoon: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exitCode = 1;
}
