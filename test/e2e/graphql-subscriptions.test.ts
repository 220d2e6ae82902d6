import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/db.ts';
import {
  subscriptionDocument,
  subscriptionFields,
  viaGraphqlSse,
  viaGraphqlWs,
  viaYoga,
  type Outcome,
} from '../helpers/graphql-subscriptions.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { expectStillServing } from '../helpers/still-serving.ts';
import { newWallet, signInHeader } from '../helpers/wallets.ts';
import { scaled } from '../helpers/time-scale.ts';

const ADMIN = 'e2e-subscriptions-admin-key';
const SIWE_DOMAIN = 'lagoon.test';

type Credential = 'none' | 'wrong key' | 'ADMIN key' | 'INFERENCE key' | 'wallet';

/**
 * Every subscription field of the schema, over both SSE transports (Yoga's own on /graphql, graphql-sse on
 * /graphql/stream) and over WebSocket (graphql-ws on /graphql), without credentials, with a wrong key and with each kind of valid credential, against the
 * server process `npm start` runs. One anonymous `walletBalance` on /graphql/stream used to end the process (issue
 * 33 item 1): a throw from the subscription's stream escaped graphql-sse. Every answer must be a refusal (4xx) or
 * an event, and the process must keep serving.
 */
describe(`GraphQL subscriptions on both transports, every credential, server process (${testDatabaseKind})`, () => {
  let server: ServerProcess;
  let removeStorage: () => Promise<void>;
  const headers: Record<Credential, Record<string, string>> = {
    none: {},
    'wrong key': { authorization: 'Bearer lagoon_this-is-not-a-key-0000000000000000000' },
    'ADMIN key': { authorization: `Bearer ${ADMIN}` },
    'INFERENCE key': {},
    wallet: {},
  };
  const args: Record<string, Record<string, string>> = {
    chatCompletionStream: {
      input: '{ model: "lagoon-sim-chat", messages: [{ role: USER, content: "Hello" }], maxCompletionTokens: 4 }',
    },
  };

  beforeAll(async () => {
    const storage = await serverStorage('lagoon-subscriptions-e2e-');
    removeStorage = storage.remove;
    const env = { ...storage.env, LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN, LAGOON_SIWE_DOMAINS: SIWE_DOMAIN };
    server = await startServer(env);
    const credit = await runCliProcess(
      ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', '5'],
      env,
    );
    expect(credit.code, credit.stderr).toBe(0);
    const created = await fetch(`${server.url}/api/v1/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiKeyType: 'INFERENCE', description: 'subscriptions' }),
    });
    const key = ((await created.json()) as { data: { apiKey: string } }).data.apiKey;
    headers['INFERENCE key'] = { authorization: `Bearer ${key}` };
    headers.wallet = { 'SIGN-IN-WITH-X': await signInHeader(newWallet(), { domain: SIWE_DOMAIN }) };
    const queued = await fetch(`${server.url}/api/v1/audio/queue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'lagoon-sim-music', prompt: 'waves on a reef', duration_seconds: 30 }),
    });
    const job = (await queued.json()) as { queue_id: string };
    expect(queued.status, JSON.stringify(job)).toBe(200);
    args.jobUpdated = { id: JSON.stringify(job.queue_id) };
  }, scaled(120_000));

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop();
    await removeStorage?.();
  });

  /** What a valid credential gets, where it is known; a new field only has to answer without a 5xx. */
  const expected: Record<string, Partial<Record<Credential, Outcome['kind'][] | string>>> = {
    chatCompletionStream: { 'ADMIN key': ['data'], 'INFERENCE key': ['data'], wallet: 'PAYMENT_REQUIRED' },
    jobUpdated: { 'ADMIN key': ['data'], 'INFERENCE key': ['data'], wallet: 'MEDIA_NOT_FOUND' },
    usageUpdated: {
      'ADMIN key': ['open', 'data'],
      'INFERENCE key': 'ADMIN_KEY_REQUIRED',
      wallet: 'AUTHENTICATION_FAILED',
    },
    walletBalance: { 'ADMIN key': 'AUTHENTICATION_FAILED', 'INFERENCE key': 'AUTHENTICATION_FAILED', wallet: ['data'] },
  };

  it('should enumerate the schema’s subscription fields', () => {
    expect(subscriptionFields().map((field) => field.name)).toEqual(
      expect.arrayContaining(['chatCompletionStream', 'jobUpdated', 'usageUpdated', 'walletBalance']),
    );
  });

  const transports = { '/graphql': viaYoga, '/graphql/stream': viaGraphqlSse, '/graphql (graphql-ws)': viaGraphqlWs };
  for (const [transport, subscribe] of Object.entries(transports)) {
    it(
      `should refuse or answer every subscription on ${transport}, and keep serving`,
      { timeout: scaled(120_000) },
      async () => {
        const failures: string[] = [];
        for (const field of subscriptionFields()) {
          const query = subscriptionDocument(field, args[field.name]);
          for (const credential of Object.keys(headers) as Credential[]) {
            const want = expected[field.name]?.[credential];
            // A refusal comes at once; only an answer expected to stay silent is waited for briefly.
            const waitMs = Array.isArray(want) && want.includes('open') ? 1_500 : 20_000;
            const outcome = await subscribe(server.url, query, headers[credential], waitMs);
            const what = `${field.name} with ${credential}: ${JSON.stringify(outcome).slice(0, 300)}`;
            if (outcome.kind === 'refused' && outcome.status >= 500) failures.push(`5xx ← ${what}`);
            if (credential === 'none') {
              if (outcome.kind !== 'refused' && outcome.kind !== 'error') failures.push(`not refused ← ${what}`);
            } else if (credential === 'wrong key') {
              // graphql-ws refuses the connection itself: close code 4403, a 403 here.
              const refused = outcome.kind === 'refused' ? outcome.status === 401 || outcome.status === 403 : false;
              if (!refused && codeOf(outcome) !== 'AUTHENTICATION_FAILED') failures.push(`not a 401 ← ${what}`);
            } else if (Array.isArray(want)) {
              if (!want.includes(outcome.kind)) failures.push(`expected ${want.join('|')} ← ${what}`);
            } else if (typeof want === 'string' && codeOf(outcome) !== want) {
              failures.push(`expected ${want} ← ${what}`);
            }
          }
        }
        expect(failures).toEqual([]);
        expect(server.child.exitCode).toBeNull();
        await expectStillServing(server.url);
      },
    );
  }

  it('should answer a syntax error on /graphql/stream with 400 and an error body', async () => {
    const response = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: '{"query":"{ models { id "}',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string }[] };
    expect(body.errors[0]?.message).toMatch(/Syntax Error/);
    expect(server.child.exitCode).toBeNull();
  });
});

/** The refusal's code: the first error's `extensions.code`. */
function codeOf(outcome: Outcome): string | undefined {
  if (outcome.kind === 'error') return outcome.errors[0]?.extensions?.code;
  if (outcome.kind === 'refused') {
    try {
      return (JSON.parse(outcome.body) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions
        ?.code;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
