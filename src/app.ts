import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServerAdapter } from '@whatwg-node/server';
import { createRestApi, REST_PREFIX } from '../rest/app.ts';
import { errorResponse, json } from '../rest/http.ts';
import { matchNodeRoute, serveNodeRoute, type NodeRoute } from '../rest/node-route.ts';
import { chatNodeRoute } from '../rest/routes/chat-node.ts';
import { rpcNodeRoute } from '../rest/routes/crypto-rpc.ts';
import { createGraphQLServer } from '../schema/yoga.ts';
import { operator } from './auth/auth-context.ts';
import type { Config } from './config.ts';
import { openDatabase, type DatabaseHandle } from './db/database.ts';
import { migrateToLatest, schemaReady } from './db/migrate.ts';
import { clip, NotFoundError } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import { loadOperatorConfig } from './operator-config/load.ts';
import { newRequestId } from './request-id.ts';
import { PACKAGE_JSON } from './runtime-files.ts';
import { closeServices, createServices, type Services } from './services.ts';

export interface App {
  /** One fetch handler for /graphql, /api/v1 and the operational endpoints. */
  fetch(request: Request): Promise<Response>;
  /** The HTTP server's listener: `fetch` for every route but the hot paid ones, which it serves on Node's objects. */
  readonly nodeListener: (req: IncomingMessage, res: ServerResponse) => void;
  readonly services: Services;
  readonly database: DatabaseHandle;
  readonly logger: Logger;
  /** The ADMIN secret created on first start when none was configured (print once). */
  readonly bootstrapSecret: string | undefined;
  close(): Promise<void>;
}

export interface AppOptions {
  logger?: Logger;
  /** An already open database (tests); otherwise one is opened from the config. */
  database?: DatabaseHandle;
}

export const VERSION: string = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;

const REQUEST_ID = /^[0-9a-f]{32}$/i;

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  // A bad operator config stops the start before anything else happens (the error names each bad path).
  const operatorConfig = await loadOperatorConfig(config.operatorConfigPath);
  const database =
    options.database ??
    (await openDatabase({
      url: config.database.url,
      dataDir: config.database.dataDir,
      preparedStatements: config.database.preparedStatements,
    }));
  await migrateToLatest(database.db);
  const metrics = new Metrics();
  const services = createServices(database.db, logger, { ...config, operatorConfig, metrics });
  await services.catalog.syncFromConfig(operatorConfig);
  // Zero-config upstream models join the catalog (an upstream that is down only logs a warning).
  await services.modelDiscovery.start();
  await services.characters.syncFromConfig(operatorConfig);
  const bootstrap = await services.accounts.bootstrap(operator('bootstrap'), config.bootstrapAdminKey);

  services.lastUsed.start();
  const sweeper = setInterval(() => {
    services.billing.sweepExpired().catch((error: unknown) => logger.error({ err: error }, 'reservation sweep failed'));
  }, config.billing.sweepIntervalMs);
  sweeper.unref();

  const rest = createRestApi({ services, config, logger, version: VERSION });
  const graphql = createGraphQLServer({ services, logger, options: config.graphql });
  const corsOrigins = new Set(config.http.corsOrigins);
  let closing: Promise<void> | undefined;

  async function route(request: Request, url: URL, requestId: string): Promise<{ response: Response; route: string }> {
    const path = url.pathname;
    if (path === '/healthz') return { response: json({ status: 'ok' }), route: '/healthz' };
    if (path === '/readyz') {
      // Ready only when the database answers and carries this build's schema.
      const reason = closing
        ? 'shutting down'
        : !(await database.ping())
          ? 'database unreachable'
          : !(await schemaReady(database.db))
            ? 'schema missing'
            : undefined;
      const body = { status: reason ? 'unavailable' : 'ready', database: database.kind, ...(reason && { reason }) };
      return {
        response: withHeaders(json(body, reason ? 503 : 200), reason ? { 'retry-after': '5' } : {}),
        route: '/readyz',
      };
    }
    if (path === '/metrics') {
      return {
        response: new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } }),
        route: '/metrics',
      };
    }
    if (path === '/graphql' || path.startsWith('/graphql/')) {
      return {
        response: await graphql.fetch(request, { requestId }),
        route: path === '/graphql' ? '/graphql' : '/graphql/stream',
      };
    }
    if (path === REST_PREFIX || path.startsWith(`${REST_PREFIX}/`)) return rest.handle(request, url, requestId);
    if (path === '/' && request.method === 'GET') {
      return {
        response: json({
          name: 'lagoon',
          version: VERSION,
          graphql: '/graphql',
          rest: REST_PREFIX,
          openapi: `${REST_PREFIX}/openapi.json`,
        }),
        route: '/',
      };
    }
    return {
      response: errorResponse(new NotFoundError(`Route not found: ${clip(request.method)} ${clip(path)}`), requestId),
      route: 'unmatched',
    };
  }

  function corsHeaders(request: Request): Record<string, string> {
    return corsHeadersFor(request.headers.get('origin'));
  }

  function corsHeadersFor(origin: string | null | undefined): Record<string, string> {
    if (!origin || corsOrigins.size === 0) return {};
    if (!corsOrigins.has('*') && !corsOrigins.has(origin)) return {};
    return {
      'access-control-allow-origin': corsOrigins.has('*') ? '*' : origin,
      'access-control-expose-headers':
        'x-request-id, retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-balance-usd, x-balance-diem, x-service-rpc-credits, x-service-rpc-cost-usd, idempotent-replayed, x-pagination-limit, x-pagination-page, x-pagination-total, x-pagination-total-pages, x-usage-warning',
      ...(corsOrigins.has('*') ? {} : { vary: 'Origin' }),
    };
  }

  async function fetch(request: Request): Promise<Response> {
    const started = performance.now();
    const incoming = request.headers.get('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming.toLowerCase() : newRequestId();
    const url = new URL(request.url);
    let result: { response: Response; route: string };
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
      const allowed = Object.keys(corsHeaders(request)).length > 0;
      const headers: Record<string, string> = allowed
        ? {
            ...corsHeaders(request),
            'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE, OPTIONS',
            'access-control-allow-headers':
              request.headers.get('access-control-request-headers') ?? 'authorization, content-type',
            'access-control-max-age': '600',
          }
        : {};
      result = { response: new Response(null, { status: allowed ? 204 : 403, headers }), route: 'preflight' };
    } else {
      try {
        result = await route(request, url, requestId);
      } catch (error) {
        logger.error({ reqId: requestId, err: error }, 'unhandled error');
        result = { response: errorResponse(error, requestId), route: 'unmatched' };
      }
    }
    const response = withHeaders(result.response, { 'x-request-id': requestId, ...corsHeaders(request) });
    observe(request.method, result.route, response.status, started, requestId);
    return response;
  }

  function observe(method: string, route: string, status: number, started: number, requestId: string): void {
    const seconds = (performance.now() - started) / 1000;
    metrics.observeRequest(method, route, status, seconds);
    logger.info({ reqId: requestId, method, route, status, ms: Math.round(seconds * 1000) }, 'request');
  }

  const adapter = createServerAdapter((request: Request) => fetch(request));
  // The hot paid routes skip the Fetch API layer (rest/node-route.ts); every other request goes through `fetch`.
  const nodeRoutes: readonly NodeRoute[] = [chatNodeRoute, rpcNodeRoute];

  function nodeListener(req: IncomingMessage, res: ServerResponse): void {
    const matched = matchNodeRoute(nodeRoutes, req.method, req.url);
    if (!matched) {
      void adapter(req, res);
      return;
    }
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming.toLowerCase() : newRequestId();
    const headers = { 'x-request-id': requestId, ...corsHeadersFor(req.headers.origin) };
    const onHead = (status: number) => observe(matched.route.method, matched.route.label, status, started, requestId);
    serveNodeRoute(
      req,
      res,
      {
        services,
        logger,
        maxJsonBytes: config.http.maxJsonBytes,
        maxChatBodyBytes: config.http.maxChatBodyBytes,
        requestId,
        headers,
        onHead,
      },
      matched,
    ).catch((error: unknown) => {
      logger.error({ reqId: requestId, err: error }, 'unhandled error');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end();
    });
  }

  async function close(): Promise<void> {
    closing ??= (async () => {
      clearInterval(sweeper);
      await services.lastUsed.stop();
      await closeServices(services);
      await database.close();
    })();
    return closing;
  }

  return { fetch, nodeListener, services, database, logger, bootstrapSecret: bootstrap?.createdSecret, close };
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    // Some responses carry immutable headers; copy them into a new response.
    const copy = new Response(response.body, response);
    for (const [name, value] of Object.entries(headers)) copy.headers.set(name, value);
    return copy;
  }
}
