import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Web3KeyService } from '../../src/auth/web3-keys.service.ts';
import { anonymous } from '../../src/auth/auth-context.ts';
import { instanceSecret } from '../../src/instance-secret.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/* GET and POST /api_keys/generate_web3_key with a real wallet signature (viem's local account, EIP-191). */

interface Created {
  success: boolean;
  data: { id: string; apiKey: string; apiKeyType: string; description: string; consumptionLimit: unknown };
}

describe(`/api_keys/generate_web3_key (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const getToken = async () => {
    const response = await t.call('/api/v1/api_keys/generate_web3_key', { key: null });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: { token: string } }).data.token;
  };
  const post = (body: unknown) => t.call('/api/v1/api_keys/generate_web3_key', { method: 'POST', key: null, body });

  it('creates a key for the wallet that signed the token, once per token', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const token = await getToken();
    const signature = await wallet.signMessage({ message: token });
    const response = await post({
      address: wallet.address,
      signature,
      token,
      apiKeyType: 'ADMIN',
      consumptionLimit: { usd: 5 },
    });
    expect(response.status).toBe(200);
    const created = (await response.json()) as Created;
    expect(created.success).toBe(true);
    expect(created.data).toMatchObject({ apiKeyType: 'ADMIN', description: 'Web3 API Key' });
    expect(created.data.consumptionLimit).toEqual({ usd: 5, diem: null, vcu: null });

    // The key works, and belongs to the wallet's account.
    const account = await t.call('/api/v1/api_keys', { key: created.data.apiKey });
    expect(account.status).toBe(200);
    const accounts = await t.app.database.db
      .selectFrom('accounts')
      .select(['kind', 'wallet_address'])
      .where('wallet_address', '=', wallet.address.toLowerCase())
      .execute();
    expect(accounts).toEqual([{ kind: 'wallet', wallet_address: wallet.address.toLowerCase() }]);

    const again = await post({ address: wallet.address, signature, token, apiKeyType: 'INFERENCE' });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: expect.stringContaining('already used') });
  });

  it('refuses another signer, a forged token and bad fields', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const token = await getToken();
    const signature = await other.signMessage({ message: token });
    const wrong = await post({ address: wallet.address, signature, token, apiKeyType: 'INFERENCE' });
    expect(wrong.status).toBe(401);

    const forged = `${token.slice(0, -4)}AAAA`;
    const forgedSignature = await wallet.signMessage({ message: forged });
    expect(
      (await post({ address: wallet.address, signature: forgedSignature, token: forged, apiKeyType: 'INFERENCE' }))
        .status,
    ).toBe(400);

    for (const body of [
      { address: 'nope', signature, token, apiKeyType: 'INFERENCE' },
      { address: wallet.address, signature: 'xyz', token, apiKeyType: 'INFERENCE' },
      { address: wallet.address, signature, token, apiKeyType: 'ROOT' },
      { address: wallet.address, signature, token, apiKeyType: 'INFERENCE', extra: 1 },
    ])
      expect((await post(body)).status, JSON.stringify(body).slice(0, 60)).toBe(400);
  });

  it('refuses an expired token', async () => {
    const secret = instanceSecret(t.app.database.db, 'web3_key_token_secret');
    const then = new Date(Date.now() - 3_600_000);
    const past = new Web3KeyService({
      db: t.app.database.db,
      apiKeys: t.app.services.apiKeys,
      secret,
      now: () => then,
    });
    const token = await past.token(anonymous('test'));
    const wallet = privateKeyToAccount(generatePrivateKey());
    const response = await post({
      address: wallet.address,
      signature: await wallet.signMessage({ message: token }),
      token,
      apiKeyType: 'INFERENCE',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: expect.stringContaining('expired') });
  });
});
