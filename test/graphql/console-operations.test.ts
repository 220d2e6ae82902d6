import { createSiweMessage } from 'viem/siwe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { newWallet } from '../helpers/wallets.ts';

/*
 * The operations the console's Jobs page and wallet sign-in added to GraphQL: completeJob (REST POST
 * /<kind>/complete) and walletSignInChallenge (REST GET /x402/nonce), over the in-process fetch handler.
 */

const VIDEO = { model: 'lagoon-sim-video', prompt: 'a lagoon at dusk', duration: '5s', resolution: '480p' };

interface Challenge {
  domain: string;
  uri: string;
  version: string;
  nonce: string;
  issuedAt: string;
  expirationTime: string;
  statement: string;
  chainId: number;
}
const CHALLENGE =
  'query { walletSignInChallenge { domain uri version nonce issuedAt expirationTime statement chainId } }';
const COMPLETE = `mutation($id: ID!) { completeJob(id: $id) { __typename
  ... on MutationCompleteJobSuccess { data { id success } } ... on Error { code message } } }`;

describe(`GraphQL operations of the console (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let other: string;

  beforeAll(async () => {
    t = await createTestApp();
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    ({ secret: other } = await createAccountWithKey(t.app.services, { name: 'other' }));
  });
  afterAll(async () => {
    await t?.close();
  });

  const queue = async (): Promise<string> => {
    const result = await t.graphql<{ queueVideo: { data: { id: string } } }>(
      'mutation($input: JSONObject!) { queueVideo(input: $input) { ... on MutationQueueVideoSuccess { data { id } } } }',
      { input: VIDEO },
      secret,
    );
    expect(result.errors).toBeUndefined();
    return result.data!.queueVideo.data.id;
  };
  const complete = (id: string, key: string) =>
    t.graphql<{ completeJob: { __typename: string; data?: { id: string; success: boolean }; code?: string } }>(
      COMPLETE,
      { id },
      key,
    );

  it('completes a job: its media is deleted and the job is gone, for GraphQL and REST alike', async () => {
    const id = await queue();
    const done = await complete(id, secret);
    expect(done.data?.completeJob).toEqual({ __typename: 'MutationCompleteJobSuccess', data: { id, success: true } });
    const after = await t.graphql<{ job: unknown }>('query($id: ID!) { job(id: $id) { id } }', { id }, secret);
    expect(after.data?.job).toBeNull();
    const rest = await t.call('/api/v1/video/retrieve', {
      body: { model: VIDEO.model, queue_id: id },
      key: secret,
    });
    expect(rest.status).toBe(404);
    // A second completion finds nothing.
    expect((await complete(id, secret)).data?.completeJob).toMatchObject({
      __typename: 'NotFoundError',
      code: 'MEDIA_NOT_FOUND',
    });
  });

  it("refuses another account's job, an unknown id and a malformed one with NotFoundError", async () => {
    const id = await queue();
    for (const [target, key] of [
      [id, other],
      ['00000000-0000-4000-8000-000000000000', secret],
      ['not-a-job', secret],
    ] as const) {
      expect((await complete(target, key)).data?.completeJob.__typename, target).toBe('NotFoundError');
    }
    // The owner still has it.
    const still = await t.graphql<{ job: { id: string } }>('query($id: ID!) { job(id: $id) { id } }', { id }, secret);
    expect(still.data?.job.id).toBe(id);
  });

  it('refuses completeJob without a credential', async () => {
    const result = await complete('00000000-0000-4000-8000-000000000000', '');
    expect(result.data?.completeJob).toBeUndefined();
    expect(result.errors?.length).toBeGreaterThan(0);
  });

  it('hands out a fresh challenge whose signed message signs a wallet in', async () => {
    const first = await t.graphql<{ walletSignInChallenge: Challenge }>(CHALLENGE, {}, null);
    const second = await t.graphql<{ walletSignInChallenge: Challenge }>(CHALLENGE, {}, null);
    expect(first.errors).toBeUndefined();
    const challenge = first.data!.walletSignInChallenge;
    expect(challenge.nonce).toMatch(/^[0-9a-f]{16}$/);
    expect(second.data!.walletSignInChallenge.nonce).not.toBe(challenge.nonce);
    expect(challenge).toMatchObject({ version: '1', chainId: 8453 });
    expect(Date.parse(challenge.expirationTime)).toBeGreaterThan(Date.parse(challenge.issuedAt));

    const wallet = newWallet();
    const message = createSiweMessage({
      ...challenge,
      version: '1',
      address: wallet.address,
      issuedAt: new Date(challenge.issuedAt),
      expirationTime: new Date(challenge.expirationTime),
    });
    const signature = await wallet.signMessage({ message });
    const payload = { address: wallet.address, message, signature, timestamp: Date.now(), chainId: 8453 };
    const header = Buffer.from(JSON.stringify(payload)).toString('base64');
    const response = await t.call('/graphql', {
      key: null,
      body: { query: 'query { wallet { address balance { balanceUsd } } }' },
      headers: { 'sign-in-with-x': header, accept: 'application/json' },
    });
    const body = (await response.json()) as { data?: { wallet: { address: string } } };
    expect(body.data?.wallet.address).toBe(wallet.address.toLowerCase());
  });
});
