import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { restRoutes } from '../rest/app.ts';
import { errorStatus } from '../rest/error-map.ts';
import { dashboardMount } from '../rest/dashboard.ts';
import { graphqlMount, opsMount } from '../rest/mounts.ts';
import { mediaMount } from '../rest/routes/media.ts';
import { createPipeline } from '../rest/pipeline.ts';
import { createGraphQLWebSocket } from '../schema/graphql-ws.ts';
import { createGraphQLServer } from '../schema/yoga.ts';
import { operator } from './auth/auth-context.ts';
import { bodyLimits, graphqlBodyLimits } from './body-limits.ts';
import { openAppStorage, type AppStorage } from './app-storage.ts';
import type { Config } from './config.ts';
import type { DatabaseHandle } from './db/database.ts';
import { createLogger, type Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import { queuedByModel } from './media/jobs/jobs.repository.ts';
import { CallLog } from './observability/call-log.ts';
import { CONSOLE_DIR, PACKAGE_JSON } from './runtime-files.ts';
import { createServices, type Services } from './services.ts';
import { quietReport, type StartupReport } from './startup-report.ts';

export interface App {
  /** The pipeline for a Fetch Request, in process (tests): the same routes and answers as `nodeListener`. */
  fetch(request: Request): Promise<Response>;
  /** The HTTP server's listener: /graphql, /api/v1 and the operational endpoints on Node's objects. */
  readonly nodeListener: (req: IncomingMessage, res: ServerResponse) => void;
  /** The HTTP server's `upgrade` listener: GraphQL over WebSocket (graphql-ws) on /graphql. */
  readonly upgradeListener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  readonly services: Services;
  readonly database: DatabaseHandle;
  readonly logger: Logger;
  /** The ADMIN secret created on first start when none was configured (print once). */
  readonly bootstrapSecret: string | undefined;
  /**
   * Shutdown, once the drain time is over: the streams still open get a SERVER_SHUTTING_DOWN error as their last
   * event and are charged for what they delivered (src/chat/chat.service.ts endStreams); then the WebSockets
   * still open are closed.
   */
  endStreams(): Promise<void>;
  /** Tells the app the port its HTTP server bound (PORT=0 picks one): the default wallet sign-in domains name it. */
  listening(port: number): void;
  close(): Promise<void>;
}

export interface AppOptions {
  logger?: Logger;
  /** An already open database (tests); otherwise one is opened from the config. */
  database?: DatabaseHandle;
  /** Where the start's phases are told (src/main.ts); by default nowhere. */
  report?: StartupReport;
  /** The config read and the database opened and migrated, begun before this module loaded (src/main.ts). */
  storage?: Promise<AppStorage>;
}

export const VERSION: string = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const report = options.report ?? quietReport;
  const { operatorConfig, database } = await (options.storage ??
    openAppStorage(config, { logger, report, database: options.database }));
  const { services, metrics, callLog, bootstrap } = await report.phase('services', async () => {
    const metrics = new Metrics();
    const callLog = new CallLog();
    const services = createServices(database.db, logger, { ...config, operatorConfig, metrics, callLog });
    await services.catalog.syncFromConfig(operatorConfig);
    await services.characters.syncFromConfig(operatorConfig);
    // Zero-config upstream models join the synced catalog (an upstream that is down only logs a warning).
    await services.start();
    metrics.setQueueDepthSource(() => queuedByModel(database.db));
    await metrics.setModelSource(async () => (await services.catalog.listModels('all')).map((model) => model.id));
    const bootstrap = await services.accounts.bootstrap(operator('bootstrap'), config.bootstrapAdminKey);
    return { services, metrics, callLog, bootstrap };
  });

  const graphqlLimits = graphqlBodyLimits(bodyLimits(config.http));
  const graphql = createGraphQLServer({
    services,
    logger,
    options: config.graphql,
    bodyLimits: graphqlLimits,
    httpStatus: errorStatus,
  });
  const webSocket = createGraphQLWebSocket({
    graphql,
    services,
    logger,
    path: '/graphql',
    // A socket carries what /graphql/stream does (chat streams, job updates): the same message limit.
    maxPayloadBytes: graphqlLimits.stream,
  });
  let closing: Promise<void> | undefined;
  const pipeline = createPipeline({
    services,
    config,
    logger,
    metrics,
    callLog,
    routes: restRoutes(VERSION),
    mounts: [
      graphqlMount(graphql),
      mediaMount(services),
      dashboardMount(CONSOLE_DIR),
      opsMount({ database, metrics, version: VERSION, closing: () => !!closing }),
    ],
  });

  async function close(): Promise<void> {
    closing ??= (async () => {
      await webSocket.close();
      await services.stop();
      await database.close();
    })();
    return closing;
  }

  return {
    fetch: pipeline.fetch,
    nodeListener: pipeline.listener,
    upgradeListener: pipeline.guardUpgrade(webSocket.handleUpgrade),
    services,
    database,
    logger,
    bootstrapSecret: bootstrap?.createdSecret,
    endStreams: async () => {
      await services.chat.endStreams();
      await webSocket.close();
    },
    listening: (port) => services.signInSite.listening(port),
    close,
  };
}
