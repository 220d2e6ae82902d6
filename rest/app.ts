import { anonymous, type AuthContext } from '../src/auth/auth-context.ts';
import type { Config } from '../src/config.ts';
import { AppError, clip, NotFoundError } from '../src/errors.ts';
import type { Logger } from '../src/logger.ts';
import type { Services } from '../src/services.ts';
import { errorResponse, json, readJsonBody } from './http.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { Router, type Route } from './router.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { billingRoutes } from './routes/billing.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { characterRoutes } from './routes/characters.ts';
import { chatRoutes } from './routes/chat.ts';
import { cryptoRpcRoutes } from './routes/crypto-rpc.ts';
import { searchRoutes } from './routes/search.ts';
import { textParserRoutes } from './routes/text-parser.ts';

export const REST_PREFIX = '/api/v1';

export interface RestApi {
  /** Handles a request whose path starts with /api/v1; `route` is the matched template for metrics. */
  handle(request: Request, url: URL, requestId: string): Promise<{ response: Response; route: string }>;
  readonly routes: readonly Route[];
}

const domainRoutes: readonly Route[] = [
  ...catalogRoutes,
  ...characterRoutes,
  ...apiKeyRoutes,
  ...billingRoutes,
  ...searchRoutes,
  ...textParserRoutes,
  ...cryptoRpcRoutes,
  ...chatRoutes,
];

export function createRestApi(deps: { services: Services; config: Config; logger: Logger; version: string }): RestApi {
  let openApi: string | undefined;
  const openApiRoute: Route = {
    method: 'GET',
    path: '/openapi.json',
    access: 'public',
    doc: { summary: 'This OpenAPI 3.1 document', tags: ['Meta'] },
    handler: () => {
      openApi ??= JSON.stringify(buildOpenApiDocument(domainRoutes, { version: deps.version }));
      return new Response(openApi, { headers: { 'content-type': 'application/json; charset=utf-8' } });
    },
  };
  const router = new Router([...domainRoutes, openApiRoute]);

  async function handle(request: Request, url: URL, requestId: string) {
    const path = url.pathname.slice(REST_PREFIX.length) || '/';
    const match = router.match(request.method, path);
    if (!match) {
      return {
        response: errorResponse(
          new NotFoundError(`Route not found: ${clip(request.method)} ${clip(url.pathname)}`),
          requestId,
        ),
        route: 'unmatched',
      };
    }
    if ('allowed' in match) {
      const response = json(
        { error: `Method ${clip(request.method)} not allowed on ${clip(url.pathname)}`, code: 'METHOD_NOT_ALLOWED' },
        405,
        { allow: match.allowed.join(', ') },
      );
      return { response, route: 'unmatched' };
    }
    const { route, params } = match;
    const label = `${route.method} ${REST_PREFIX}${route.path}`;
    try {
      const auth = await authenticate(request, requestId, route);
      const limit =
        typeof route.bodyLimit === 'function'
          ? route.bodyLimit(deps.config)
          : (route.bodyLimit ?? deps.config.http.maxJsonBytes);
      const response = await route.handler({
        request,
        url,
        params,
        auth,
        services: deps.services,
        config: deps.config,
        requestId,
        json: () => readJsonBody(request, limit),
      });
      return { response, route: label };
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500)
        deps.logger.error({ reqId: requestId, err: error, route: label }, 'request failed');
      return { response: errorResponse(error, requestId), route: label };
    }
  }

  async function authenticate(request: Request, requestId: string, route: Route): Promise<AuthContext> {
    try {
      return await deps.services.auth.authenticate({ authorization: request.headers.get('authorization') }, requestId);
    } catch (error) {
      // A public route answers anyone; a bad key there is treated as no key.
      if (route.access === 'public') return anonymous(requestId);
      throw error;
    }
  }

  return { handle, routes: router.routes };
}
