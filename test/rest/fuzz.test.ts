import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startJsonRpcStub } from '../helpers/json-rpc-stub.ts';
import { send } from '../helpers/http-client.ts';
import { damagedCopies, noisyPicture, pictureRoutes, type PictureFormat } from '../helpers/pictures.ts';
import { startSearxng, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { rng, type Rng } from '../helpers/seeded-random.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * Bad input over every REST route (read from the OpenAPI document, so a new route is fuzzed without a change here)
 * and the operational endpoints, over HTTP through the listener `npm start` serves with. Each route gets up to a
 * hundred generated requests (wrong types, huge numbers, NUL, unicode, huge strings, missing and extra fields, bad
 * query parameters, bad path ids, bad JSON, wrong content types), each sent with a funded ADMIN key and with none.
 * No answer may be a 5xx, and every 4xx must be the error body {error: string, code: string}. Seeded: the same
 * requests every run. The search and crypto RPC upstreams are local fakes, so a request that happens to be valid
 * succeeds rather than failing upstream.
 */

const SEED = 0x15_0008;
/*
 * Whether a request is refused does not depend on the database; that a refusal charges nothing does. The
 * embedded pass sends 100 requests per route, the PostgreSQL pass 40 and one picture format: both passes run in CI,
 * whose whole run has a time budget, and this file was the suite's longest (160 per route cost the embedded pass
 * 12 s of CPU more, 10 s alone on a 2-core host).
 */
const ON_POSTGRES = testDatabaseKind === 'postgres';
const REQUESTS_PER_ROUTE = ON_POSTGRES ? 40 : 100;
const PICTURE_FORMATS: readonly PictureFormat[] = ON_POSTGRES ? ['png'] : ['png', 'jpeg', 'gif', 'webp'];
/** The operational endpoints take no input worth many tries. */
const REQUESTS_PER_PLAIN_ROUTE = 30;

// Long strings keep spaces in them: a long run without whitespace is a tokenizer cost of its own (issue 15 item 2).
const HUGE_TEXT = 'tide pool '.repeat(12_000);
const BAD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(50),
  '😀🦦',
  '\ud800',
  'مرحبا‮',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\r\n\t',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '../../etc/passwd',
  '%00',
  '%',
  '__proto__',
  'x'.repeat(5_000),
  HUGE_TEXT,
  '1e999999999',
  '-1',
  '1e10',
  '9223372036854775808',
  '9223372036.854775808',
  'NaN',
  'Infinity',
  '0x10',
  '9999-12-31',
  '0000-01-01',
  '2024-02-30',
  '+275760-09-13T00:00:00Z',
  '1969-12-31T23:59:59+14:00',
  '00000000-0000-0000-0000-000000000000',
  'true',
  'null',
];
const BAD_NUMBERS = [
  0,
  -1,
  -0.5,
  1.5,
  1e10,
  1e21,
  1e308,
  -1e308,
  2 ** 53 + 1,
  9_223_372_037,
  0.000_000_000_1,
  Number.MAX_SAFE_INTEGER,
];

function badValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 2 ? 4 : 7)) {
    case 0:
      return r.pick(BAD_STRINGS);
    case 1:
      return r.pick(BAD_NUMBERS);
    case 2:
      return r.pick([null, true, false]);
    case 3:
      return r.pick([[], {}, [[[]]], { '': '' }]);
    case 4:
      return Array.from({ length: r.int(4) }, () => badValue(r, depth + 1));
    case 5:
      return Object.fromEntries(
        Array.from({ length: r.int(4) }, () => [r.pick(BAD_STRINGS).slice(0, 200), badValue(r, depth + 1)]),
      );
    default:
      return r.chance(0.5) ? Array.from({ length: 3_000 }, (_, i) => i) : r.pick(BAD_STRINGS);
  }
}

/** A copy of `value` with one leaf (or object field) replaced, removed or added, at any depth. */
function mutate(value: unknown, r: Rng): unknown {
  if (Array.isArray(value)) {
    if (value.length === 0 || r.chance(0.2)) return r.chance(0.5) ? [] : [...value, badValue(r)];
    const index = r.int(value.length);
    return value.map((item, i) => (i === index ? mutate(item, r) : item));
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    const action = r.int(10);
    if (action === 0 || entries.length === 0) return { ...value, [r.pick(BAD_STRINGS).slice(0, 300)]: badValue(r) };
    const [key, field] = r.pick(entries);
    if (action === 1) return Object.fromEntries(entries.filter(([k]) => k !== key));
    return { ...value, [key]: action < 5 ? badValue(r) : mutate(field, r) };
  }
  return badValue(r);
}

interface FuzzRoute {
  method: string;
  /** OpenAPI template, e.g. /api/v1/models/{id}. */
  template: string;
  query: string[];
  bodyType: string | undefined;
}

interface Attempt {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string | FormData;
}

const encode = (text: string) => encodeURIComponent(text).replace(/%25(?=[0-9A-F]{2})/g, '%');
const PATH_VALUES = [
  '%00',
  '%FF',
  '%E0%A4%A',
  '..',
  '%2e%2e',
  'x'.repeat(4_000),
  encodeURIComponent('😀'),
  '00000000-0000-0000-0000-000000000000',
  'lagoon-sim-chat',
  'a%00b',
  '%20',
  encodeURIComponent('a/b/c'),
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
  'application/json; charset=latin1',
  '*/*',
];
const RAW_BODIES = [
  '',
  '{',
  '{"a":',
  'null',
  '[]',
  '"text"',
  '42',
  '\u0000',
  '{"a":1}{"b":2}',
  '\ufeff{}',
  'x'.repeat(2_000),
  '{"__proto__":{"polluted":true}}',
  '[' + '['.repeat(5_000) + ']'.repeat(5_001),
];

function attempt(route: FuzzRoute, bases: Record<string, unknown>, r: Rng): Attempt {
  let path = route.template.replace(/\{(\w+)\}/g, (_, name: string) =>
    r.chance(0.7) ? r.pick(PATH_VALUES) : encode(String(bases[`path:${name}`] ?? 'x')),
  );
  if (route.query.length > 0 || r.chance(0.3)) {
    const params = new URLSearchParams();
    for (let i = r.int(4); i >= 0; i -= 1) {
      const name = r.chance(0.85) && route.query.length > 0 ? r.pick(route.query) : r.pick(BAD_STRINGS).slice(0, 100);
      const value = r.chance(0.5) ? r.pick(BAD_STRINGS) : String(badValue(r));
      params.append(name, value.slice(0, 3_000));
    }
    path += `?${params.toString()}`;
  }
  const headers: Record<string, string> = {};
  if (r.chance(0.2))
    headers.accept = r.pick(['text/csv', 'text/csv;q=0.5, application/json', '*/*', 'application/xml']);
  if (r.chance(0.1))
    headers['idempotency-key'] = r
      .pick(BAD_STRINGS)
      .slice(0, 300)
      .replace(/[^\x20-\x7e]/g, '?');
  if (!route.bodyType) return { path, method: route.method, headers };
  if (route.bodyType === 'multipart/form-data' && r.chance(0.3)) {
    const form = new FormData();
    if (r.chance(0.7))
      form.set('file', new Blob([r.pick(BAD_STRINGS)]), r.pick(['a.txt', 'a.pdf', 'x'.repeat(300), '\u0000.txt']));
    if (r.chance(0.5)) form.set('response_format', r.pick(BAD_STRINGS).slice(0, 200));
    return { path, method: route.method, headers, body: form };
  }
  const roll = r.int(10);
  let body: string;
  if (roll === 0) body = r.pick(RAW_BODIES);
  else if (roll === 1) body = JSON.stringify(badValue(r));
  else {
    let value: unknown = bases[`${route.method} ${route.template}`] ?? {};
    for (let i = 1 + r.int(2); i > 0; i -= 1) value = mutate(value, r);
    body = JSON.stringify(value) ?? 'null';
  }
  const type = r.chance(0.75)
    ? route.bodyType === 'multipart/form-data'
      ? 'multipart/form-data; boundary=fuzz'
      : 'application/json'
    : r.pick(CONTENT_TYPES);
  if (type) headers['content-type'] = type;
  return { path, method: route.method, headers, body };
}

describe(`Fuzzing every REST route (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let searxng: FakeUpstream;
  let node: Awaited<ReturnType<typeof startJsonRpcStub>>;
  let adminSecret: string;
  const bases: Record<string, unknown> = {};
  let routes: FuzzRoute[] = [];

  beforeAll(async () => {
    [searxng, node] = await Promise.all([startSearxng(), startJsonRpcStub()]);
    server = await startChatServer({
      SEARXNG_URL: searxng.url,
      RPC_UPSTREAM_ETHEREUM_SEPOLIA: node.url,
      LAGOON_MAX_KEYS_PER_ACCOUNT: '2000',
    });
    const admin = await createAccountWithKey(server.t.app.services, { credit: { USD: '1000', DIEM: '10' } });
    adminSecret = admin.secret;
    const other = await server.t.app.services.apiKeys.create(admin.auth, {
      apiKeyType: 'INFERENCE',
      description: 'fuzz target',
    });
    Object.assign(bases, {
      'POST /api/v1/api_keys': {
        apiKeyType: 'INFERENCE',
        description: 'fuzz',
        consumptionLimit: { usd: 1, diem: null },
        limitPeriod: 'MONTH',
        modelPrivacy: 'ALL',
        expiresAt: '2099-01-01',
      },
      'PATCH /api/v1/api_keys': {
        id: other.key.id,
        description: 'fuzzed',
        consumptionLimit: { usd: 2 },
        expiresAt: '',
      },
      'POST /api/v1/chat/completions': {
        model: 'lagoon-sim-chat',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Tell me about otters.' }] },
        ],
        max_tokens: 16,
        temperature: 0.5,
        stream: false,
        service_parameters: { character_slug: 'lagoon-guide', enable_web_search: 'off' },
      },
      'POST /api/v1/augment/search': { query: 'otters', limit: 3, search_provider: 'google' },
      'POST /api/v1/crypto/rpc/{network}': { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
      'path:id': other.key.id,
      'path:slug': 'lagoon-guide',
      'path:network': 'ethereum-sepolia',
    });
    const doc = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, unknown> } }
        >
      >;
    };
    routes = Object.entries(doc.paths).flatMap(([template, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        bodyType: Object.keys(operation.requestBody?.content ?? {})[0],
      })),
    );
    for (const path of ['/healthz', '/readyz', '/metrics', '/api/v1/nope'])
      routes.push({ method: 'GET', template: path, query: [], bodyType: undefined });
    routes.push({ method: 'PUT', template: '/api/v1/api_keys', query: [], bodyType: 'application/json' });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all([searxng?.close(), node?.close()]);
  });

  it('should list every route of the route tables in the OpenAPI document', () => {
    const listed = new Set(routes.map((route) => `${route.method} ${route.template}`));
    for (const route of [
      'GET /api/v1/models/{id}',
      'POST /api/v1/chat/completions',
      'POST /api/v1/crypto/rpc/{network}',
      'POST /api/v1/augment/text-parser',
      'DELETE /api/v1/api_keys',
      'GET /api/v1/billing/usage',
    ]) {
      expect(listed).toContain(route);
    }
    expect(routes.length).toBeGreaterThanOrEqual(20);
  });

  it(
    'should answer every bad request below 500, each 4xx in the error shape',
    { timeout: scaled(120_000) },
    async () => {
      const r = rng(SEED);
      const failures: string[] = [];
      const counts = new Map<number, number>();
      for (const route of routes) {
        const attempts = Array.from(
          { length: route.template.startsWith('/api/v1') ? REQUESTS_PER_ROUTE : REQUESTS_PER_PLAIN_ROUTE },
          () => attempt(route, bases, r),
        );
        // A few at a time: enough to overlap requests without measuring the machine.
        for (let i = 0; i < attempts.length; i += 8) {
          await Promise.all(
            attempts.slice(i, i + 8).flatMap((a) =>
              [adminSecret, undefined].map(async (key) => {
                const headers = { ...a.headers, ...(key && { authorization: `Bearer ${key}` }) };
                const response = await send(`${server.url}${a.path}`, { method: a.method, headers, body: a.body });
                const text = response.text;
                counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
                const what = `${a.method} ${a.path.slice(0, 150)} ${key ? 'admin' : 'no key'} ${JSON.stringify(a.headers).slice(0, 100)} ${typeof a.body === 'string' ? a.body.slice(0, 150) : a.body ? '<form>' : ''}`;
                if (response.status >= 500) failures.push(`${response.status} ← ${what}: ${text.slice(0, 200)}`);
                else if (response.status >= 400 && route.template.startsWith('/api/v1')) {
                  let body: unknown;
                  try {
                    body = JSON.parse(text);
                  } catch {
                    body = text;
                  }
                  // The error body, or on a route a wallet may use without credentials the x402 discovery body.
                  const shaped =
                    typeof body === 'object' &&
                    body !== null &&
                    typeof (body as { error?: unknown }).error === 'string' &&
                    (typeof (body as { code?: unknown }).code === 'string' ||
                      (response.status === 402 && (body as { x402Version?: unknown }).x402Version === 2));
                  if (!shaped)
                    failures.push(`${response.status} not in the error shape ← ${what}: ${text.slice(0, 200)}`);
                }
              }),
            ),
          );
        }
      }
      expect(failures.slice(0, 30)).toEqual([]);
      // The inputs reach the routes' checks, not only the authentication in front of them.
      expect(counts.get(400) ?? 0).toBeGreaterThan(1_000);
      expect(counts.get(200) ?? 0).toBeGreaterThan(100);
    },
  );

  /** A funded account of its own (no earlier request's settlement can show in its balances), and its balances. */
  const freshAccount = async () => {
    const { accountId, adminSecret: secret } = await createAccountWithKey(server.t.app.services, {
      credit: { USD: '100', DIEM: '10' },
    });
    const balances = async () =>
      JSON.stringify(await server.t.app.services.billing.balancesOf(accountId), (_key, value: unknown) =>
        typeof value === 'bigint' ? value.toString() : value,
      );
    return { secret, balances };
  };

  it(
    'should answer damaged pictures on the six picture routes below 500, refusals charging nothing',
    { timeout: scaled(300_000) },
    async () => {
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      const { secret, balances } = await freshAccount();
      const other = await noisyPicture(320, 240, 'png');
      const routes = pictureRoutes(server.url, secret, other);
      for (const format of PICTURE_FORMATS) {
        const picture = await noisyPicture(320, 240, format);
        for (const damaged of damagedCopies(picture)) {
          // Some damage leaves a picture that decodes (a missing last byte, flipped bytes in JPEG data): it is then
          // an ordinary call, and the local background-removal model spends seconds on each; the others suffice.
          const decodes = await sharp(damaged.bytes)
            .raw()
            .toBuffer()
            .then(() => true)
            .catch(() => false);
          for (const route of routes.filter((r) => !decodes || !r.name.includes('background-remove'))) {
            const before = await balances();
            const response = await route.send(damaged.bytes);
            const text = await response.text();
            const what = `${route.name} ← ${format} ${damaged.name}: ${response.status} ${text.slice(0, 200)}`;
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            if (response.status >= 500) failures.push(what);
            // A refusal is charged nothing and leaves nothing held; a picture that still decodes is an edit.
            if (response.status >= 400 && (await balances()) !== before) failures.push(`charged: ${what}`);
          }
        }
      }
      expect(failures).toEqual([]);
      expect(statuses.get(400) ?? 0).toBeGreaterThan(25 * PICTURE_FORMATS.length);
    },
  );

  it('should refuse every body that is not a JSON object on every POST route, charging nothing', async () => {
    const { secret, balances } = await freshAccount();
    const before = await balances();
    const failures: string[] = [];
    const posts = routes.filter((route) => route.method === 'POST' && route.bodyType !== undefined);
    expect(posts.length).toBeGreaterThanOrEqual(20);
    for (const route of posts) {
      const path = route.template.replace(/\{(\w+)\}/g, (_, name: string) =>
        encode(String(bases[`path:${name}`] ?? 'x')),
      );
      for (const body of ['null', '[]', '[null]', '[[]]', '0', '-1e309', '"{}"', 'true', 'false', ' null ']) {
        for (const key of [secret, undefined]) {
          const response = await fetch(`${server.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
            body,
          });
          const text = await response.text();
          if (response.status >= 500 || response.status < 400)
            failures.push(
              `${route.template} ${body} ${key ? 'admin' : 'no key'} → ${response.status} ${text.slice(0, 200)}`,
            );
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await balances()).toBe(before);
  });
});
