import { readFile } from 'node:fs/promises';
import { chooseCoding } from './compression.ts';
import { JSON_TYPE_HEADER, type Reply } from './http.ts';
import type { Mount } from './pipeline.ts';

/*
 * The web console (web/, built into dist/web by web/build.ts) at /dashboard: its content-hashed files under
 * /dashboard/assets/ (cached for good), and index.html for /dashboard and every other path below it, the console's
 * own routes (never cached without asking). Each file is sent precompressed (.br, .gz) when the client accepts it.
 * Only names of the build's shape are read from disk, so no path leaves the console's folder.
 */

export const DASHBOARD_PATH = '/dashboard';
const ASSET_PREFIX = `${DASHBOARD_PATH}/assets/`;
/** esbuild's `[name]-[hash].ext`: letters, digits, '-' and '_' only, so nothing like `..` or `/` passes. */
const ASSET_NAME = /^[A-Za-z0-9_-]+\.(js|css)$/;

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** Self only: the console talks to this server alone (connect-src covers /graphql and /graphql/stream). */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

export function dashboardMount(dir: URL): Mount {
  return (req, _res, path) => {
    if (path !== DASHBOARD_PATH && !path.startsWith(`${DASHBOARD_PATH}/`)) return undefined;
    const label = DASHBOARD_PATH;
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') return Promise.resolve({ reply: methodNotAllowed(method), label });
    const accept = headerValue(req.headers['accept-encoding']);
    if (path.startsWith(ASSET_PREFIX)) {
      const name = path.slice(ASSET_PREFIX.length);
      const match = ASSET_NAME.exec(name);
      if (!match) return Promise.resolve({ reply: notFound(), label });
      const file = { url: new URL(`assets/${name}`, dir), type: TYPES[match[1]!]! };
      const cache = 'public, max-age=31536000, immutable';
      return serveFile(file, accept, cache).then((reply) => ({ reply: reply ?? notFound(), label }));
    }
    const index = { url: new URL('index.html', dir), type: TYPES.html! };
    return serveFile(index, accept, 'no-cache').then((reply) => ({ reply: reply ?? notBuilt(), label }));
  };
}

async function serveFile(
  file: { url: URL; type: string },
  acceptEncoding: string | undefined,
  cacheControl: string,
): Promise<Reply | undefined> {
  const coding = chooseCoding(acceptEncoding ?? null);
  const headers = { 'content-type': file.type, 'cache-control': cacheControl, vary: 'accept-encoding' };
  if (coding) {
    const body = await readOrUndefined(new URL(`${file.url.href}.${coding === 'br' ? 'br' : 'gz'}`));
    if (body) return { status: 200, headers: { ...headers, ...SECURITY_HEADERS, 'content-encoding': coding }, body };
  }
  const body = await readOrUndefined(file.url);
  return body && { status: 200, headers: { ...headers, ...SECURITY_HEADERS }, body };
}

async function readOrUndefined(url: URL): Promise<Uint8Array | undefined> {
  try {
    return new Uint8Array(await readFile(url));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

const errorReply = (status: number, error: string, code: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': JSON_TYPE_HEADER, ...headers },
  body: JSON.stringify({ error, code }),
});

const notFound = () => errorReply(404, 'No such file of the console', 'NOT_FOUND');
const notBuilt = () =>
  errorReply(503, 'The console is not built: run `npm run build`', 'SERVICE_UNAVAILABLE', { 'retry-after': '5' });
const methodNotAllowed = (method: string) =>
  errorReply(405, `Method ${method.slice(0, 20)} not allowed on ${DASHBOARD_PATH}`, 'METHOD_NOT_ALLOWED', {
    allow: 'GET, HEAD',
  });
