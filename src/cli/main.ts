import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createLogger } from '../logger.ts';
import { createServices, type Services } from '../services.ts';
import { controlSocketPath, runViaControlSocket } from './control-socket.ts';
import { runCli } from './program.ts';

/** `npm run lagoon -- <command>`: through a running server's control socket if there is one, else directly. */
async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  if (!config.database.url) {
    const remote = await runViaControlSocket(controlSocketPath(config.database.dataDir), argv);
    if (remote) {
      process.stdout.write(remote.stdout);
      process.stderr.write(remote.stderr);
      return remote.exitCode;
    }
  }
  const handle = await openDatabase({ url: config.database.url, dataDir: config.database.dataDir, poolSize: 2 });
  let services: Services | undefined;
  try {
    await migrateToLatest(handle.db);
    // Logs go to stderr: stdout carries the command's output (`--json` must stay parseable).
    services = createServices(handle.db, createLogger('warn', process.stderr), config);
    return await runCli(argv, services, { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) });
  } finally {
    if (services) await services.stop();
    await handle.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(
    `lagoon: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exitCode = 1;
}
