import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNano } from '../../src/billing/money.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { PROMPT_MARKER } from '../helpers/test-logs.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * One log line per call (docs/operations.md, Logs): request and trace ids, account and key ids, route or GraphQL
 * operation, status, and for a paid call its model, units, cost and upstream as its settlement recorded them;
 * never the key, a header or the prompt.
 */

interface CallLine {
  msg: string;
  reqId: string;
  traceId?: string;
  accountId?: string;
  keyId?: string;
  method: string;
  route: string;
  operation?: string;
  status: number;
  model?: string;
  upstream?: string;
  units?: number;
  cost?: string;
  currency?: string;
  ms: number;
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe(`the request log line (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let keyId: string;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const linesOf = (reqId: string) =>
    lines.map((line) => JSON.parse(line) as CallLine).filter((l) => l.msg === 'request' && l.reqId === reqId);
  /** The call's one line: written once its answer is written out, a moment after the client read the end of it. */
  const lineOf = async (reqId: string): Promise<CallLine> => {
    await eventually(async () => expect(linesOf(reqId)).toHaveLength(1));
    return linesOf(reqId)[0]!;
  };
  const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
  const chat = (reqId: string, body: Record<string, unknown> = {}, key = secret) =>
    t.call('/api/v1/chat/completions', {
      key,
      headers: { 'x-request-id': reqId, traceparent: TRACEPARENT },
      body: { model: 'lagoon-sim-chat', messages: [{ role: 'user', content: `Say hi ${PROMPT_MARKER}` }], ...body },
    });

  beforeAll(async () => {
    t = await createTestApp({}, { logger: createLogger('info', sink) });
    ({ secret, accountId, keyId } = await createAccountWithKey(t.app.services, {
      credit: { USD: '5' },
      type: 'INFERENCE',
    }));
  }, scaled(120_000));
  afterAll(async () => t?.close(), scaled(60_000));

  it('says who called, what ran where, and what the settlement charged; never the key or the prompt', async () => {
    const reqId = 'a'.repeat(32);
    const before = (await usd()).amount;
    const response = await chat(reqId, { max_tokens: 30 });
    expect(response.status).toBe(200);
    const { usage } = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    await t.app.services.billing.flush(accountId);
    const charged = before - (await usd()).amount;
    const line = await lineOf(reqId);
    expect(line).toMatchObject({
      reqId,
      traceId: TRACE_ID,
      accountId,
      keyId,
      method: 'POST',
      route: '/api/v1/chat/completions',
      status: 200,
      model: 'lagoon-sim-chat',
      upstream: 'simulator',
      units: usage.prompt_tokens + usage.completion_tokens,
      cost: formatNano(charged),
      currency: 'USD',
    });
    expect(line.ms).toBeGreaterThanOrEqual(0);
    const all = lines.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(PROMPT_MARKER);
    expect(all.toLowerCase()).not.toContain('bearer');
  });

  it('writes a stream’s line when it ends, with what its settlement charged', async () => {
    const reqId = 'b'.repeat(32);
    const response = await chat(reqId, { stream: true, max_tokens: 20 });
    expect(response.status).toBe(200);
    await response.text();
    const line = await lineOf(reqId);
    expect(line).toMatchObject({ status: 200, model: 'lagoon-sim-chat', upstream: 'simulator', currency: 'USD' });
    expect(Number(line.cost)).toBeGreaterThan(0);
    expect(line.units).toBeGreaterThan(0);
  });

  it('names a GraphQL call by its operation, and a refused call has its status and no cost', async () => {
    const gqlId = 'c'.repeat(32);
    const answer = await t.call('/graphql', {
      key: secret,
      headers: { 'x-request-id': gqlId, accept: 'application/json' },
      body: { query: 'query MyModels { models { id } }', operationName: 'MyModels' },
    });
    expect(answer.status).toBe(200);
    await answer.text();
    expect(await lineOf(gqlId)).toMatchObject({
      route: '/graphql',
      operation: 'MyModels',
      accountId,
      keyId,
      status: 200,
    });

    const broke = await createAccountWithKey(t.app.services, { type: 'INFERENCE' });
    const refusedId = 'd'.repeat(32);
    expect((await chat(refusedId, {}, broke.secret)).status).toBe(402);
    const refused = await lineOf(refusedId);
    expect(refused).toMatchObject({ status: 402, accountId: broke.accountId, keyId: broke.keyId });
    expect(refused.cost).toBeUndefined();
    // A call without a traceparent has no trace id (and a malformed one is ignored).
    const plainId = 'e'.repeat(32);
    await t.call('/api/v1/models', { key: null, headers: { 'x-request-id': plainId, traceparent: 'garbage' } });
    expect((await lineOf(plainId)).traceId).toBeUndefined();
  });
});
