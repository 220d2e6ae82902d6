import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { failWith, startImageUpstream, type FakeImageUpstream } from '../helpers/image-edit-upstreams.ts';
import {
  animatedGif,
  flipped,
  noisyPicture,
  pictureRoutes,
  truncated,
  type PictureRoute,
} from '../helpers/pictures.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * The caller's pictures on the six picture routes, over HTTP through the listener `npm start` serves with, on the
 * zero-config engines (the built-in simulator edits and upscales, the local background-removal model): a picture
 * whose header reads but whose data does not decode, and an animation too large in frames × pixels, are the
 * caller's 400 with the error body, and nothing is charged or left held.
 */

const TIMEOUT = 120_000;

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`Picture inputs: damaged and animated pictures (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let secret: string;
  let accountId: string;
  let good: Buffer;
  let routes: PictureRoute[];

  const usd = async () => {
    const balance = (await server.t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD');
    return { amount: balance?.amount ?? 0n, reserved: balance?.reserved ?? 0n };
  };

  /** Every route answers 400 naming the field, and the account's balance and holds are as they were. */
  async function refusedEverywhere(picture: Buffer, message: RegExp) {
    const before = await usd();
    for (const route of routes) {
      const response = await route.send(picture);
      const text = await response.text();
      expect(response.status, `${route.name}: ${text.slice(0, 300)}`).toBe(400);
      const body = JSON.parse(text) as ErrorBody;
      expect(body.code, route.name).toBe('INVALID_REQUEST');
      expect(body.error, route.name).toMatch(message);
      expect(body.issues?.[0]?.path.join('.'), route.name).toBe(route.field);
      expect(await usd(), route.name).toEqual({ amount: before.amount, reserved: 0n });
    }
  }

  beforeAll(async () => {
    server = await startChatServer();
    ({ secret, accountId } = await createAccountWithKey(server.t.app.services, {
      type: 'INFERENCE',
      credit: { USD: '10' },
    }));
    good = await noisyPicture(320, 240, 'png');
    routes = pictureRoutes(server.url, secret, good);
  }, TIMEOUT);
  afterAll(async () => server?.close());

  it('refuses a truncated PNG (header intact, data cut) on all six routes', { timeout: TIMEOUT }, async () => {
    const cut = truncated(good, 0.6);
    // sharp reads its header: the failure comes only when the pixels are decoded.
    expect((await sharp(cut).metadata()).width).toBe(320);
    await refusedEverywhere(cut, /cannot be decoded|could not be decoded/i);
  });

  it('refuses damaged JPEG, GIF and PNG data whose header reads', { timeout: TIMEOUT }, async () => {
    const jpeg = await noisyPicture(320, 240, 'jpeg');
    const gif = await noisyPicture(320, 240, 'gif');
    for (const damaged of [
      truncated(jpeg, 0.6),
      truncated(jpeg, 0.95),
      flipped(gif, Math.floor(gif.length / 2)),
      flipped(good, Math.floor(good.length / 2)),
    ]) {
      expect((await sharp(damaged).metadata()).width).toBe(320);
      await refusedEverywhere(damaged, /decoded/i);
    }
  });

  it(
    'refuses an animated GIF of 3,000 frames of 4000×4000 (about 100 KB) on all six routes',
    { timeout: TIMEOUT },
    async () => {
      const gif = await animatedGif(4000, 4000, 3000);
      expect(gif.length).toBeLessThan(200_000);
      const meta = await sharp(gif).metadata();
      expect([meta.width, meta.height, meta.pages]).toEqual([4000, 4000, 3000]);
      await refusedEverywhere(gif, /3,000 frames/);
    },
  );

  it('takes a small animated GIF (the engines use its first frame)', { timeout: TIMEOUT }, async () => {
    const gif = await animatedGif(320, 240, 3);
    const before = await usd();
    const response = await routes[0]!.send(gif);
    expect(response.status, await response.clone().text()).toBe(200);
    const out = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect(out.pages ?? 1).toBe(1);
    const after = await usd();
    expect(after.amount).toBeLessThan(before.amount);
    expect(after.reserved).toBe(0n);
  });
});

describe(`Picture inputs: a remote engine that fails on a damaged picture (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let upstream: FakeImageUpstream;
  let dir: string;
  let secret: string;
  let accountId: string;

  beforeAll(async () => {
    upstream = await startImageUpstream();
    dir = await mkdtemp(join(tmpdir(), 'lagoon-picture-inputs-'));
    const config = join(dir, 'operator.yaml');
    await writeFile(
      config,
      [
        'providers:',
        `  - { id: oai, type: openai-compatible, baseUrl: "${upstream.url}/v1", timeoutMs: 5000, maxRetries: 0 }`,
        'models:',
        '  - { id: oai-edit, type: inpaint, name: Remote edit, provider: oai, pricing: { inpaint: { usd: 0.05 } } }',
      ].join('\n'),
    );
    server = await startChatServer({ LAGOON_CONFIG: config });
    ({ secret, accountId } = await createAccountWithKey(server.t.app.services, {
      type: 'INFERENCE',
      credit: { USD: '10' },
    }));
  }, TIMEOUT);
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'answers 400 naming the picture when it does not decode, the upstream error when it does',
    { timeout: TIMEOUT },
    async () => {
      const good = await noisyPicture(320, 240, 'png');
      const edit = (picture: Buffer) =>
        fetch(`${server.url}/api/v1/image/edit`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'oai-edit', prompt: 'an otter', image: picture.toString('base64') }),
        });
      const usd = async () =>
        (await server.t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD');
      const before = await usd();
      upstream.queue(failWith(500));
      const damaged = await edit(truncated(good, 0.6));
      expect(damaged.status).toBe(400);
      expect(((await damaged.json()) as ErrorBody).issues?.[0]).toMatchObject({
        path: ['image'],
        message: expect.stringMatching(/cannot be decoded/),
      });
      upstream.queue(failWith(500));
      const whole = await edit(good);
      expect(whole.status).toBeGreaterThanOrEqual(500);
      expect(((await whole.json()) as ErrorBody).code).toBe('UPSTREAM_ERROR');
      expect(upstream.requests).toHaveLength(2);
      expect(await usd()).toMatchObject({ amount: before?.amount, reserved: 0n });
    },
  );
});
