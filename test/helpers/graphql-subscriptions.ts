import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { createClient, NetworkError } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { schema } from '../../schema/index.ts';

/** What a subscription answered first. */
export type Outcome =
  | { kind: 'refused'; status: number; body: string }
  | { kind: 'error'; errors: { message: string; extensions?: { code?: string } }[] }
  | { kind: 'data'; data: Record<string, unknown> }
  | { kind: 'ended' }
  | { kind: 'open' };

/** Every subscription field of the schema, so that a new one is covered without a change to the tests. */
export function subscriptionFields(): GraphQLField<unknown, unknown>[] {
  return Object.values(schema.getSubscriptionType()?.getFields() ?? {});
}

/**
 * A document subscribing to the field: `args` where given, otherwise a made-up value for every required argument
 * (valid for its type, so the document passes validation and reaches the field), and `__typename` as selection.
 */
export function subscriptionDocument(field: GraphQLField<unknown, unknown>, args: Record<string, string> = {}): string {
  const literals = field.args
    .filter((arg) => args[arg.name] !== undefined || isNonNullType(arg.type))
    .map((arg) => `${arg.name}: ${args[arg.name] ?? literalFor(arg.type)}`);
  const selection = isObjectType(getNamedType(field.type)) ? ' { __typename }' : '';
  return `subscription { ${field.name}${literals.length ? `(${literals.join(', ')})` : ''}${selection} }`;
}

function literalFor(type: GraphQLInputType): string {
  if (isNonNullType(type)) return literalFor(type.ofType);
  if (isListType(type)) return `[${literalFor(type.ofType)}]`;
  if (isEnumType(type)) return type.getValues()[0]!.name;
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).filter((f) => isNonNullType(f.type));
    return `{ ${fields.map((f) => `${f.name}: ${literalFor(f.type)}`).join(', ')} }`;
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
      case 'Float':
        return '1';
      case 'Boolean':
        return 'false';
      case 'ID':
        return '"00000000-0000-4000-8000-000000000000"';
      case 'JSON':
      case 'JSONObject':
        return '{}';
      case 'DateTime':
        return '"2030-01-01T00:00:00Z"';
      case 'Decimal':
        return '"1"';
      default:
        return '"x"';
    }
  }
  return 'null';
}

function classify(result: { data?: unknown; errors?: unknown }): Outcome {
  if (Array.isArray(result.errors) && result.errors.length > 0)
    return { kind: 'error', errors: result.errors as Extract<Outcome, { kind: 'error' }>['errors'] };
  return { kind: 'data', data: (result.data ?? {}) as Record<string, unknown> };
}

/** The first answer over Yoga's own SSE on /graphql (`Accept: text/event-stream`), read with raw fetch. */
export async function viaYoga(
  base: string,
  query: string,
  headers: Record<string, string>,
  waitMs: number,
): Promise<Outcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), waitMs);
  try {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
      signal: controller.signal,
    });
    if (!response.headers.get('content-type')?.startsWith('text/event-stream'))
      return { kind: 'refused', status: response.status, body: await response.text() };
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { kind: 'ended' };
      buffered += value;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (event === 'complete') return { kind: 'ended' };
        if (event === 'next' || (!event && data)) return classify(JSON.parse(data) as { data?: unknown });
      }
    }
  } catch (error) {
    if (controller.signal.aborted) return { kind: 'open' };
    throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** The first answer on /graphql/stream through the `graphql-sse` client, as an application subscribes. */
export async function viaGraphqlSse(
  base: string,
  query: string,
  headers: Record<string, string>,
  waitMs: number,
): Promise<Outcome> {
  const client = createClient({ url: `${base}/graphql/stream`, headers, fetchFn: fetch, retryAttempts: 0 });
  const events = client.iterate({ query });
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<'open'>((resolve) => (timer = setTimeout(() => resolve('open'), waitMs)));
  try {
    const first = await Promise.race([events.next(), silent]);
    if (first === 'open') return { kind: 'open' };
    if (first.done) return { kind: 'ended' };
    return classify(first.value);
  } catch (error) {
    if (error instanceof NetworkError && error.response) {
      const response = error.response as Response;
      return { kind: 'refused', status: response.status, body: await response.text().catch(() => '') };
    }
    throw error;
  } finally {
    clearTimeout(timer);
    await events.return?.();
    client.dispose();
  }
}

/**
 * The first answer over graphql-ws on /graphql, through its own client with the `ws` implementation: the headers
 * go in `connection_init`'s payload (Apollo's and urql's way) or, with `via: 'upgrade'`, on the upgrade request.
 * A closed socket is a refusal whose status is the close code less 4000 (graphql-ws's 4403 is a 403).
 */
export async function viaGraphqlWs(
  base: string,
  query: string,
  headers: Record<string, string>,
  waitMs: number,
  via: 'payload' | 'upgrade' = 'payload',
): Promise<Outcome> {
  const upgradeHeaders = via === 'upgrade' ? headers : {};
  class HeadedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: upgradeHeaders });
    }
  }
  const client = createWsClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: HeadedWebSocket,
    connectionParams: via === 'payload' ? headers : {},
    retryAttempts: 0,
    lazy: true,
  });
  const events = client.iterate({ query });
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<'open'>((resolve) => (timer = setTimeout(() => resolve('open'), waitMs)));
  try {
    const first = await Promise.race([events.next(), silent]);
    if (first === 'open') return { kind: 'open' };
    if (first.done) return { kind: 'ended' };
    return classify(first.value);
  } catch (error) {
    if (Array.isArray(error)) return { kind: 'error', errors: error as Extract<Outcome, { kind: 'error' }>['errors'] };
    if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number') {
      const reason = 'reason' in error ? String(error.reason) : '';
      return { kind: 'refused', status: error.code >= 4000 ? error.code - 4000 : error.code, body: reason };
    }
    throw error;
  } finally {
    clearTimeout(timer);
    await events.return?.();
    await client.dispose();
  }
}
