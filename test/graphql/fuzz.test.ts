import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../helpers/app.ts';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { rng, type Rng } from '../helpers/seeded-random.ts';
import { expectStillServing } from '../helpers/still-serving.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * Bad input over both GraphQL endpoints, /graphql (Yoga: queries, mutations, its own SSE) and /graphql/stream
 * (graphql-sse, both of its modes), through the listener `npm start` serves with: random methods, content types,
 * accept headers, credentials, query strings, bodies (malformed JSON, non-objects, wrong field types, syntax errors,
 * huge, deep and aliased documents, introspection), variables and extensions. No answer may be a 5xx or missing,
 * no rejection may go unhandled, and the server answers /healthz and a query afterwards. Seeded: the same
 * requests every run. (An anonymous subscription once ended the process, and a syntax error on the stream
 * endpoint was a 500: issue 33 item 1.)
 */

const SEED = 0x33_0001;
const REQUESTS_PER_ENDPOINT = 320;

const CHAT_INPUT = '{ model: "lagoon-sim-chat", messages: [{ role: USER, content: "Hi" }], maxCompletionTokens: 2 }';
const DOCUMENTS = [
  '{ models { id } }',
  '{ account { id name balances { currency available } } }',
  '{ __typename }',
  '{ __schema { types { name } } }',
  '{ __type(name: "Query") { name fields { name } } }',
  '{ a: __schema { queryType { name } } b: __schema { queryType { name } } }',
  `{ __schema { types { ${'ofType { '.repeat(20)}name${' }'.repeat(20)} } } }`,
  `{ ${Array.from({ length: 200 }, (_, i) => `a${i}: __schema { types { name } }`).join(' ')} }`,
  `{ ${Array.from({ length: 40 }, (_, i) => `m${i}: models { id }`).join(' ')} }`,
  `{ models { id ${'@include(if: true) '.repeat(60)}} }`,
  `mutation { ${Array.from({ length: 12 }, (_, i) => `c${i}: chatCompletion(input: ${CHAT_INPUT}) { __typename }`).join(' ')} }`,
  `mutation { chatCompletion(input: ${CHAT_INPUT}) { __typename } }`,
  'mutation { createApiKey(input: { apiKeyType: INFERENCE, description: "fuzz" }) { __typename } }',
  'mutation($input: JSONObject!) { queueVideo(input: $input) { __typename } }',
  'query($id: ID!) { job(id: $id) { id status } }',
  `subscription { chatCompletionStream(input: ${CHAT_INPUT}) { __typename } }`,
  'subscription { walletBalance { balanceUsd } }',
  'subscription { usageUpdated { id } }',
  'subscription($id: ID!) { jobUpdated(id: $id) { id } }',
  'subscription { walletBalance { balanceUsd } } subscription Two { usageUpdated { id } }',
  '{ models { id ',
  '{ models { id } } }',
  'query { nope }',
  'mutation { nope }',
  'subscription { models { id } }',
  '',
  ' ',
  '#',
  '{',
  '}',
  '\u0000',
  '{ models(first: -1) { id } }',
  '{ "string" }',
  `{ ${'models { id } '.repeat(400)} }`,
  '{ models { id } } fragment F on Query { ...F }',
  '{ ...F } fragment F on Query { ...G } fragment G on Query { ...F }',
  'query Q($v: NoSuchType) { models { id } }',
  `{ models { id } } ${'#'.repeat(100_000)}`,
  `query ${'x'.repeat(5_000)} { models { id } }`,
  '😀🦦',
  'x'.repeat(70_000),
];
const VARIABLES: unknown[] = [
  undefined,
  null,
  {},
  [],
  'x',
  1,
  true,
  { id: 'nope' },
  { id: '00000000-0000-4000-8000-000000000000' },
  { id: 12 },
  { input: null },
  { input: 'x' },
  { input: { model: 'lagoon-sim-video', prompt: 'waves', duration: '5s' } },
  { input: { __proto__: { polluted: true } } },
  { a: 'x'.repeat(10_000) },
  JSON.parse('{"__proto__": {"x": 1}}') as unknown,
];
const EXTENSIONS: unknown[] = [
  undefined,
  null,
  {},
  [],
  'x',
  { operationId: 'op-1' },
  { operationId: 12 },
  { persistedQuery: { version: 1, sha256Hash: 'abc' } },
  { http: { status: 500 } },
];
const OPERATION_NAMES: unknown[] = [undefined, null, '', 'Two', 'Nope', 12, {}, ['x']];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/graphql+json',
  'application/graphql-response+json',
  'application/graphql',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'multipart/form-data',
  'text/plain',
  'text/plain; x=application/json',
  'APPLICATION/JSON',
  'application/json, text/plain',
  ';;;',
  undefined,
];
const ACCEPTS = [
  'text/event-stream',
  'application/json',
  'application/graphql-response+json',
  'application/graphql-response+json, application/json',
  'multipart/mixed',
  'text/html',
  '*/*',
  'nope/nope',
  undefined,
];
const METHODS = ['POST', 'POST', 'POST', 'POST', 'GET', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const KEYS = [ADMIN_KEY, ADMIN_KEY, undefined, undefined, 'lagoon_not-a-key', ''];

interface Attempt {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

function params(r: Rng): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (r.chance(0.9)) fields.query = r.chance(0.9) ? r.pick(DOCUMENTS) : r.pick([1, null, [], {}, true]);
  if (r.chance(0.5)) fields.variables = r.pick(VARIABLES);
  if (r.chance(0.3)) fields.extensions = r.pick(EXTENSIONS);
  if (r.chance(0.2)) fields.operationName = r.pick(OPERATION_NAMES);
  if (r.chance(0.05)) fields.extra = 'x';
  return fields;
}

function body(r: Rng): string {
  switch (r.int(10)) {
    case 0:
      return r.pick(['', 'null', '[]', '"x"', '1', 'true', '{', '{"query":', '{"query":"{ models { id "}', '\u0000']);
    case 1:
      return JSON.stringify([params(r), params(r)]);
    case 2:
      return `--fuzz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify(params(r))}\r\n--fuzz\r\nContent-Disposition: form-data; name="map"\r\n\r\n${r.pick(['{"0":["variables.file"]}', '[]', '{', 'null'])}\r\n--fuzz${r.pick(['--', '', '\r\n'])}`;
    case 3:
      return new URLSearchParams({ query: String(r.pick(DOCUMENTS)) }).toString();
    case 4:
      return JSON.stringify(params(r)).slice(0, r.int(60));
    default:
      return JSON.stringify(params(r));
  }
}

function queryString(r: Rng): string {
  if (r.chance(0.4)) return '';
  const search = new URLSearchParams();
  const fields = params(r);
  for (const [name, value] of Object.entries(fields)) {
    search.set(name, typeof value === 'string' ? value : r.chance(0.8) ? JSON.stringify(value) : '{bad');
  }
  if (r.chance(0.1)) search.set('token', r.pick(['x', '', 'nope']));
  if (r.chance(0.1)) search.set('operationId', r.pick(['op-1', '']));
  const text = search.toString();
  // Long query strings stay below Node's header limit: the HTTP parser's 431 is not what is tested here.
  return `?${text.slice(0, 6_000)}${r.chance(0.05) ? '%' : ''}`;
}

function attempt(r: Rng, path: string, streamTokens: readonly string[]): Attempt {
  const key = r.pick(KEYS);
  const credentials: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
  // Most requests are framed as a client frames them, so their bodies reach GraphQL's own checks.
  if (r.chance(0.65)) {
    const accept =
      path === '/graphql' ? r.pick(['application/graphql-response+json', 'text/event-stream']) : 'text/event-stream';
    const headers = { ...credentials, 'content-type': 'application/json', accept };
    return { method: 'POST', path: `${path}${r.chance(0.1) ? queryString(r) : ''}`, headers, body: body(r) };
  }
  const method = r.pick(METHODS);
  const headers: Record<string, string> = { ...credentials };
  const type = r.pick(CONTENT_TYPES);
  if (type !== undefined) headers['content-type'] = type;
  const accept = r.pick(ACCEPTS);
  if (accept !== undefined) headers.accept = accept;
  if (r.chance(0.15)) headers['x-graphql-event-stream-token'] = r.pick([...streamTokens, 'nope', '']);
  if (r.chance(0.05)) headers['SIGN-IN-WITH-X'] = r.pick(['x', 'e30=', '']);
  const withBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  return { method, path: `${path}${queryString(r)}`, headers, body: withBody ? body(r) : undefined };
}

describe(`Fuzzing /graphql and /graphql/stream (${testDatabaseKind})`, () => {
  let server: ChatServer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    server = await startChatServer();
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server?.close();
  });

  it('should answer every request below 500 and keep serving', { timeout: scaled(180_000) }, async () => {
    const r = rng(SEED);
    // graphql-sse's single-connection mode: a few reserved streams for the fuzzed requests to name.
    const streamTokens: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const reserved = await fetch(`${server.url}/graphql/stream`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(reserved.status).toBe(201);
      streamTokens.push(await reserved.text());
    }
    const failures: string[] = [];
    const counts = new Map<number, number>();
    const attempts = ['/graphql', '/graphql/stream'].flatMap((path) =>
      Array.from({ length: REQUESTS_PER_ENDPOINT }, () => attempt(r, path, streamTokens)),
    );
    for (let i = 0; i < attempts.length; i += 8) {
      await Promise.all(
        attempts.slice(i, i + 8).map(async (a) => {
          const what = `${a.method} ${a.path.slice(0, 160)} ${JSON.stringify(a.headers).slice(0, 160)} ${a.body?.slice(0, 160) ?? ''}`;
          try {
            const response = await fetch(`${server.url}${a.path}`, {
              method: a.method,
              headers: a.headers,
              body: a.body ?? null,
              signal: AbortSignal.timeout(20_000),
            });
            counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
            // An event stream or multipart/mixed may stay open (a valid subscription): its status is the answer.
            const streaming = /^(text\/event-stream|multipart\/mixed)/.test(response.headers.get('content-type') ?? '');
            const text = streaming ? '' : await response.text();
            if (streaming) await response.body?.cancel();
            if (response.status >= 500) failures.push(`${response.status} ← ${what}: ${text.slice(0, 200)}`);
          } catch (error) {
            failures.push(`no answer (${String(error)}) ← ${what}`);
          }
        }),
      );
    }
    expect(failures.slice(0, 30)).toEqual([]);
    expect(unhandled).toEqual([]);
    // The inputs reach GraphQL's checks, not only the content-type and method checks in front of them.
    expect(counts.get(400) ?? 0).toBeGreaterThan(100);
    expect(counts.get(200) ?? 0).toBeGreaterThan(50);
    await expectStillServing(server.url);
  });
});
