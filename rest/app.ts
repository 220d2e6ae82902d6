import { buildOpenApiDocument } from './openapi.ts';
import type { Route } from './router.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { web3KeyRoutes } from './routes/web3-keys.ts';
import { rateLimitRoutes } from './routes/rate-limits.ts';
import { billingRoutes } from './routes/billing.ts';
import { usageHistoryRoutes } from './routes/usage-history.ts';
import { catalogRoutes } from './routes/catalog.ts';
import { characterRoutes } from './routes/characters.ts';
import { characterReviewRoutes } from './routes/character-reviews.ts';
import { chatRoutes } from './routes/chat.ts';
import { embeddingRoutes } from './routes/embeddings.ts';
import { responsesRoutes } from './routes/responses.ts';
import { transcriptionRoutes } from './routes/transcription.ts';
import { cryptoRpcRoutes } from './routes/crypto-rpc.ts';
import { backgroundRemovalRoutes } from './routes/background-removal.ts';
import { imageEditRoutes } from './routes/image-edit.ts';
import { imageRoutes } from './routes/images.ts';
import { jobRoutesList } from './routes/jobs.ts';
import { mediaRoutes } from './routes/media.ts';
import { searchRoutes } from './routes/search.ts';
import { speechRoutes } from './routes/speech.ts';
import { textParserRoutes } from './routes/text-parser.ts';
import { walletRoutes } from './routes/wallets.ts';
import { x402TopUpRoutes } from './routes/x402-top-up.ts';
import { webhookRoutes } from './routes/webhooks.ts';

/* The REST route table: each handler written once, served by the pipeline (pipeline.ts) on both entries. */

const domainRoutes: readonly Route[] = [
  ...catalogRoutes,
  ...characterRoutes,
  ...characterReviewRoutes,
  ...apiKeyRoutes,
  ...web3KeyRoutes,
  ...rateLimitRoutes,
  ...billingRoutes,
  ...usageHistoryRoutes,
  ...searchRoutes,
  ...textParserRoutes,
  ...cryptoRpcRoutes,
  ...chatRoutes,
  ...embeddingRoutes,
  ...responsesRoutes,
  ...mediaRoutes,
  ...imageRoutes,
  ...imageEditRoutes,
  ...backgroundRemovalRoutes,
  ...speechRoutes,
  ...transcriptionRoutes,
  ...jobRoutesList,
  ...walletRoutes,
  ...x402TopUpRoutes,
  ...webhookRoutes,
];

/** Every REST route, with this OpenAPI document at /openapi.json. */
export function restRoutes(version: string): readonly Route[] {
  let openApi: string | undefined;
  const openApiRoute: Route = {
    method: 'GET',
    path: '/openapi.json',
    access: 'public',
    doc: { summary: 'This OpenAPI 3.1 document', tags: ['Meta'] },
    handler: () => {
      openApi ??= JSON.stringify(buildOpenApiDocument(domainRoutes, { version }));
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: openApi };
    },
  };
  return [...domainRoutes, openApiRoute];
}
