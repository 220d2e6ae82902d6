import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { fundedAccount } from '../helpers/uploads.ts';

/*
 * A JSON body's base64 picture is decoded from the body's bytes when it is long enough to be lifted out of the JSON
 * (64 KB and more): each form a caller may send must still be read, and each bad one refused as before.
 */

const TIMEOUT = 60_000;

describe(`REST image edit, long base64 pictures in a JSON body (${testDatabaseKind})`, () => {
  let t: TestApp;
  let account: Awaited<ReturnType<typeof fundedAccount>>;
  let noisy: Buffer;

  const edit = (image: string) =>
    t.call('/api/v1/image/edit', { body: { image, prompt: 'make it blue' }, key: account.secret });

  beforeAll(async () => {
    t = await createTestApp();
    account = await fundedAccount(t, '5');
    const noise = { type: 'gaussian' as const, mean: 128, sigma: 50 };
    noisy = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#000', noise } })
      .png()
      .toBuffer();
  }, TIMEOUT);
  afterAll(async () => {
    await t?.close();
  });

  const expectEdited = async (response: Response) => {
    expect(response.status).toBe(200);
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect(meta.format).toBe('png');
    // The built-in engine keeps the input's aspect ratio (4:3) at 1K.
    expect(meta.width! / meta.height!).toBeCloseTo(4 / 3, 1);
  };

  it(
    'should read base64, base64url, a data URL and line-wrapped base64 alike',
    async () => {
      const base64 = noisy.toString('base64');
      expect(base64.length).toBeGreaterThan(100_000);
      await expectEdited(await edit(base64));
      await expectEdited(await edit(noisy.toString('base64url')));
      await expectEdited(await edit(`data:image/png;base64,${base64}`));
      await expectEdited(await edit(base64.replace(/(.{76})/g, '$1\n')));
    },
    TIMEOUT,
  );

  it(
    'should refuse bad text with 400 naming image, and charge nothing',
    async () => {
      const before = (await account.balance()).amount;
      const base64 = noisy.toString('base64');
      const bad = [
        `${base64.slice(0, 70_000)}*${base64.slice(70_001)}`,
        `${base64.slice(0, 70_000)}=${base64.slice(70_001)}`,
        `data:image/png,${base64}`,
        `ftp://${'x'.repeat(70_000)}`,
        Buffer.alloc(90_000, 1).toString('base64'),
      ];
      for (const image of bad) {
        const response = await edit(image);
        expect(response.status, image.slice(0, 40)).toBe(400);
        const body = (await response.json()) as { code: string; issues?: { path: unknown[] }[] };
        expect(body.code).toBe('INVALID_REQUEST');
        expect(body.issues?.[0]?.path).toEqual(['image']);
      }
      expect((await account.balance()).amount).toBe(before);
    },
    TIMEOUT,
  );

  it(
    'should refuse a body that is not UTF-8 with 400, whether or not its picture is long',
    async () => {
      for (const image of ['abc', noisy.toString('base64')]) {
        const body = Buffer.concat([Buffer.from('{"prompt":"x\xff', 'latin1'), Buffer.from(`","image":"${image}"}`)]);
        const response = await t.app.fetch(
          new Request(`${BASE}/api/v1/image/edit`, {
            method: 'POST',
            headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
            body,
          }),
        );
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: string }).error).toMatch(/not valid JSON/);
      }
    },
    TIMEOUT,
  );
});
