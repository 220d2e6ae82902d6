import type * as GraphiQLFiles from '@graphql-yoga/render-graphiql/graphiql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

/** Where GraphiQL's own files are served: under /graphql, so the front door hands them to Yoga. */
export const GRAPHIQL_ASSETS_PATH = '/graphql/graphiql/';

type Assets = typeof GraphiQLFiles;

interface Asset {
  readonly type: string;
  readonly body: (assets: Assets) => string | Uint8Array<ArrayBuffer>;
}

/** Monaco's workers by the label it asks for (MonacoEnvironment.getWorkerUrl below). */
const ASSETS: Record<string, Asset> = {
  'graphiql.js': { type: 'text/javascript; charset=utf-8', body: (a) => a.js },
  'graphiql.css': { type: 'text/css; charset=utf-8', body: (a) => a.css },
  'editorWorkerService.worker.js': { type: 'text/javascript; charset=utf-8', body: (a) => a.editorWorkerService },
  'json.worker.js': { type: 'text/javascript; charset=utf-8', body: (a) => a.jsonWorker },
  'graphql.worker.js': { type: 'text/javascript; charset=utf-8', body: (a) => a.graphqlWorker },
  'favicon.ico': { type: 'image/x-icon', body: (a) => dataUrlBytes(a.favicon) },
};

/**
 * GraphiQL from files in the install (@graphql-yoga/render-graphiql ships Yoga's GraphiQL built), not from a CDN:
 * the page works offline. Yoga's own renderer of that package inlines all of it (about 9 MB of HTML per page
 * view); here the page is small and names its files, which a browser caches. The files are loaded on first use.
 */
export function renderGraphiQL(options: GraphiQLOptions): string {
  const json = JSON.stringify(options).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${GRAPHIQL_ASSETS_PATH}favicon.ico" />
    <link rel="stylesheet" href="${GRAPHIQL_ASSETS_PATH}graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      self.MonacoEnvironment = {
        globalAPI: false,
        getWorkerUrl: (_moduleId, label) => '${GRAPHIQL_ASSETS_PATH}' + label + '.worker.js',
      };
    </script>
    <script src="${GRAPHIQL_ASSETS_PATH}graphiql.js"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${json});
    </script>
  </body>
</html>
`;
}

/** Answers GET requests for GraphiQL's files (404 for any other name under the path). */
export function useGraphiQLAssets(): Plugin {
  let loading: Promise<Assets> | undefined;
  return {
    onRequest({ url, request, endResponse, fetchAPI }) {
      if (!url.pathname.startsWith(GRAPHIQL_ASSETS_PATH)) return;
      const asset = ASSETS[url.pathname.slice(GRAPHIQL_ASSETS_PATH.length)];
      if (!asset || (request.method !== 'GET' && request.method !== 'HEAD')) {
        endResponse(new fetchAPI.Response('Not found', { status: 404, headers: { 'content-type': 'text/plain' } }));
        return;
      }
      loading ??= import('@graphql-yoga/render-graphiql/graphiql');
      return loading.then((assets) => {
        const headers = { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' };
        const body = request.method === 'HEAD' ? null : asset.body(assets);
        endResponse(new fetchAPI.Response(body, { status: 200, headers }));
      });
    },
  };
}

function dataUrlBytes(dataUrl: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64'));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
