import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { AuthContext } from '../src/auth/auth-context.ts';
import type { Config } from '../src/config.ts';
import type { Operations } from '../src/services.ts';
import type { Reply } from './http.ts';

/** `account`: an API key or a signed-in wallet; `wallet`: a signed-in wallet only; `admin`: an ADMIN key. */
export type Access = 'public' | 'account' | 'admin' | 'wallet';

/** What a handler is given (pipeline.ts makes it). The request is Node's: its headers are lower-case. */
export interface RouteContext {
  readonly headers: IncomingHttpHeaders;
  /** The request body, unread (most handlers call `json()` or `bytes()` instead). */
  readonly body: Readable;
  /** Made on first use: the hot routes never need one. */
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly auth: AuthContext;
  readonly services: Operations;
  readonly config: Config;
  readonly requestId: string;
  /** Aborted when the client goes away before its answer is written. */
  readonly signal: AbortSignal;
  /** A header's value (the first, if repeated). */
  header(name: string): string | undefined;
  /** The origin the client reached us on (Host, X-Forwarded-Proto: requestOrigin), for absolute URLs. */
  readonly origin: string | undefined;
  /**
   * The JSON body parsed: 415 unless declared application/json, 413 past the route's limit, 400 if not JSON or not
   * an object.
   */
  json(): Promise<Record<string, unknown>>;
  /** The raw bytes of a JSON body, with the same checks, unparsed. */
  bytes(): Promise<Uint8Array>;
}

export interface RouteDoc {
  readonly summary: string;
  readonly tags?: readonly string[];
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** Media type of `body` (default application/json), e.g. multipart/form-data for uploads. */
  readonly bodyContentType?: string;
  readonly response?: z.ZodType;
  readonly responseDescription?: string;
}

export interface Route {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path below /api/v1, with `:name` segments. */
  readonly path: string;
  /** Documentation only (OpenAPI security); services check permissions themselves. */
  readonly access: Access;
  /** Body size limit in bytes, or the configured one it follows; defaults to the configured JSON limit. */
  readonly bodyLimit?: number | ((config: Config) => number);
  readonly doc: RouteDoc;
  readonly handler: (ctx: RouteContext) => Promise<Reply> | Reply;
}

export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, string>;
}

/** A small path matcher: literal segments win over `:param` segments. */
export class Router {
  private readonly compiled: { route: Route; segments: string[] }[];
  /** Routes without parameters by method and path: the common case is a lookup, with nothing allocated. */
  private readonly literal = new Map<string, Map<string, RouteMatch>>();

  constructor(routes: readonly Route[]) {
    this.compiled = routes
      .map((route) => ({ route, segments: route.path.split('/').filter(Boolean) }))
      .sort((a, b) => specificity(b.segments) - specificity(a.segments));
    for (const route of routes) {
      if (route.path.includes(':')) continue;
      const byMethod = this.literal.get(route.path) ?? new Map<string, RouteMatch>();
      byMethod.set(route.method, { route, params: {} });
      this.literal.set(route.path, byMethod);
    }
  }

  match(method: string, path: string): RouteMatch | { allowed: string[] } | undefined {
    const exact = this.literal.get(path)?.get(method);
    if (exact) return exact;
    const parts = path.split('/').filter(Boolean).map(safeDecode);
    const allowed: string[] = [];
    for (const { route, segments } of this.compiled) {
      const params = matchSegments(segments, parts);
      if (!params) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { allowed } : undefined;
  }

  get routes(): readonly Route[] {
    return this.compiled.map((entry) => entry.route);
  }
}

/** `:name` matches one segment; a last `:name*` matches the rest of the path (ids such as `org/model`). */
function matchSegments(segments: string[], parts: string[]): Record<string, string> | undefined {
  const rest = segments.at(-1)?.endsWith('*') ?? false;
  if (rest ? parts.length < segments.length : segments.length !== parts.length) return undefined;
  // Literal segments are checked first, so a route that does not match allocates nothing.
  for (let i = 0; i < segments.length; i += 1) {
    const segment = segments[i] ?? '';
    if (!segment.startsWith(':') && segment !== parts[i]) return undefined;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i += 1) {
    const segment = segments[i] ?? '';
    if (rest && i === segments.length - 1) params[segment.slice(1, -1)] = parts.slice(i).join('/');
    else if (segment.startsWith(':')) params[segment.slice(1)] = parts[i] ?? '';
  }
  return params;
}

const specificity = (segments: string[]) =>
  segments.reduce((score, s) => score * 4 + (s.endsWith('*') ? 0 : s.startsWith(':') ? 1 : 2), 1);

export function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
