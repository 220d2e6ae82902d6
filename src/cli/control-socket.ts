import { createHash } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from '../logger.ts';
import type { Operations } from '../services.ts';
import { runCli, type CliAnswer } from './program.ts';

export type CliResult = CliAnswer;

/** A command sent to the server: the command line, and the key the CLI read from its environment or stdin. */
interface CliRequest {
  argv: string[];
  keyFromEnv?: string;
  keyFromStdin?: string;
}

/** Where a server on this PGlite data directory listens for operator commands (owner-only unix socket). */
export function controlSocketPath(dataDir: string): string {
  const absolute = resolve(dataDir);
  const inDir = join(absolute, 'control.sock');
  // Unix socket paths are limited to ~107 bytes; long data-dir paths use a stable name in the temp dir.
  return inDir.length < 100
    ? inDir
    : join(tmpdir(), `lagoon-${createHash('sha256').update(absolute).digest('hex').slice(0, 16)}.sock`);
}

/** Lets `npm run lagoon` work while the server holds the embedded database (one process may open it). */
export async function startControlSocket(
  path: string,
  services: Operations,
  logger: Logger,
): Promise<() => Promise<void>> {
  rmSync(path, { force: true });
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/cli') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const result: CliResult = { exitCode: 1, stdout: '', stderr: '' };
        try {
          const { argv, keyFromEnv, keyFromStdin } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as CliRequest;
          result.exitCode = await runCli(argv, services, {
            out: (s) => (result.stdout += s),
            err: (s) => (result.stderr += s),
            // The server's own environment and stdin are not the operator's: only what the CLI sent counts.
            keys: {
              fromEnv: keyFromEnv,
              ...(keyFromStdin !== undefined && { fromStdin: () => Promise.resolve(keyFromStdin) }),
            },
          });
        } catch (error) {
          result.stderr += `lagoon: ${error instanceof Error ? error.message : String(error)}\n`;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      })();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(path, () => done());
  });
  chmodSync(path, 0o600);
  logger.debug({ path }, 'operator control socket listening');
  return () =>
    new Promise<void>((done) => {
      server.close(() => done());
      rmSync(path, { force: true });
    });
}

/**
 * Runs a CLI command in the server listening on `path`; undefined when no server is there. `keys` are what the CLI
 * read itself: LAGOON_ADMIN_KEY, and the key on its standard input for `--key -`.
 */
export function runViaControlSocket(
  path: string,
  argv: readonly string[],
  keys: { fromEnv?: string | undefined; fromStdin?: string | undefined } = {},
): Promise<CliResult | undefined> {
  return new Promise((done) => {
    const req = httpRequest(
      { socketPath: path, method: 'POST', path: '/cli', headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            done(JSON.parse(Buffer.concat(chunks).toString('utf8')) as CliResult);
          } catch {
            done(undefined);
          }
        });
      },
    );
    req.on('error', () => done(undefined));
    const request: CliRequest = { argv: [...argv], keyFromEnv: keys.fromEnv, keyFromStdin: keys.fromStdin };
    req.end(JSON.stringify(request));
  });
}
