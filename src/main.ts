import { createServer, type Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { answerClientError } from '../rest/client-error.ts';
import { openAppStorage } from './app-storage.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { startTracing } from './observability/tracing.ts';
import { countTextTokens } from './tokenizer.ts';
import { startupReport, type StartupReport } from './startup-report.ts';
import { warnOfPublicSettings } from './public-settings.ts';

/** After the drain timeout, how long closing (streams ended, settlements written back, the database closed) may take. */
const SHUTDOWN_GRACE_MS = 3_000;
/** After the streams still open were ended, how long their last events may take to reach the clients. */
const STREAM_END_MS = 1_000;

/** The composition root: config → app (database, services, GraphQL, REST) → HTTP server; drains on SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  const report = startupReport(logger);
  // Before the app: the database's statements get spans only when tracing is on by the time it opens.
  const tracing = await startTracing(config.tracing);
  if (tracing) logger.info('tracing: spans exported over OTLP');
  // Fewer, not longer, full garbage collections: each pauses every request in flight for 5–15 ms, and V8's default
  // growth (about 1.5× the live heap) brings one every few seconds under load. Costs heap headroom (bench/RESULTS.md).
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  // The embedded database is WebAssembly: V8 recompiles a function with its optimising compiler once it has run a
  // while, and PGlite's own start ran enough of them to spend ~1 s of CPU on that before the first request. Ten times
  // the default budget leaves the start to the baseline code and still optimises what a running server uses most
  // (bench/RESULTS.md, "WebAssembly tiering").
  setFlagsFromString('--wasm-tiering-budget=18000000');
  const { app, VERSION } = await startApp(config, logger, report);

  const server = createServer(app.nodeListener);
  server.on('clientError', answerClientError);
  server.on('upgrade', app.upgradeListener);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  // The bound port, not the configured one: PORT=0 asks the system for a free port.
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : config.http.port;
  app.listening(port);
  const address = `http://${config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host}:${port}`;
  logger.info({ address, database: app.database.kind, version: VERSION }, 'lagoon listening');
  warnOfPublicSettings(config, app.services.signInSite, logger);
  // With the embedded database only this process may open it, so the operator CLI talks to us instead.
  const stopControl =
    app.database.kind === 'pglite' && config.controlSocket
      ? await import('./cli/control-socket.ts').then(({ controlSocketPath, startControlSocket }) =>
          startControlSocket(controlSocketPath(config.database.dataDir), app.services, logger),
        )
      : async () => undefined;
  printBanner(VERSION, address, app.database.kind, app.bootstrapSecret);
  report.ready({ address });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining in-flight requests');
    // Whatever hangs (a request that never ends, a database that does not answer), the process ends by then.
    setTimeout(() => {
      logger.error({ graceMs: SHUTDOWN_GRACE_MS }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.http.shutdownTimeoutMs + SHUTDOWN_GRACE_MS);
    void shutdown(
      server,
      {
        endStreams: () => app.endStreams(),
        close: async () => {
          await stopControl();
          await app.close();
          await tracing?.shutdown();
        },
      },
      config.http.shutdownTimeoutMs,
    ).then(
      () => {
        logger.info('stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** The app made from the config, or the process ends saying why it could not start. */
async function startApp(config: Config, logger: Logger, report: StartupReport) {
  // The database opens (the embedded one in its own thread) while this thread loads the app's modules: on the
  // embedded database each took about a second, one after the other.
  let opened = false;
  const storage = openAppStorage(config, { logger, report }).then((open) => ((opened = true), open));
  storage.catch(() => undefined); // answered below, once createApp awaits it
  const { createApp, VERSION } = await import('./app.ts');
  // The tokenizer's tables (~0.1 s; a first chat call would otherwise wait for them) are built while the database is
  // still opening, when it is (the embedded one): then they cost the start nothing. Otherwise (PostgreSQL answered
  // first) on first use, rather than on the start's critical path or in the middle of its first requests.
  if (!opened) countTextTokens('warm up');
  const app = await createApp(config, { logger, report, storage }).catch((error: unknown) => {
    logger.fatal({ err: error }, 'could not start');
    console.error(`lagoon: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
  return { app, VERSION };
}

/**
 * Stops accepting and lets in-flight requests finish, up to the timeout. Streams still open then end with an error
 * event and are charged for what they delivered (not cut off as if their clients had gone); what is still open a
 * moment later is cut. Then the app closes (pending charges written, the database closed cleanly).
 */
async function shutdown(
  server: Server,
  app: { endStreams(): Promise<void>; close(): Promise<void> },
  timeoutMs: number,
): Promise<void> {
  let closed = false;
  const allClosed = new Promise<void>((resolve) => server.close(() => resolve())).then(() => (closed = true));
  // A keep-alive connection stays open after its answer: closed once idle, so the drain ends with the last request.
  const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
  idleSweep.unref();
  const within = (ms: number) => Promise.race([allClosed, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  await within(timeoutMs);
  if (!closed) {
    await app.endStreams();
    await within(STREAM_END_MS);
    server.closeAllConnections();
  }
  await allClosed;
  clearInterval(idleSweep);
  await app.close();
}

function printBanner(version: string, address: string, database: string, bootstrapSecret: string | undefined): void {
  const lines = [
    `Lagoon ${version} on ${address} (database: ${database})`,
    `  GraphQL  ${address}/graphql`,
    `  REST     ${address}/api/v1   (OpenAPI: /api/v1/openapi.json)`,
  ];
  if (bootstrapSecret) {
    lines.push(
      '',
      '  First start: created the bootstrap account and its ADMIN key. It is shown only now:',
      '',
      `    ${bootstrapSecret}`,
      '',
      '  (Set LAGOON_BOOTSTRAP_ADMIN_KEY to choose the key yourself.)',
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
