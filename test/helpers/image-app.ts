import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from './app.ts';
import { eventually } from './eventually.ts';
import { startImageUpstream, type FakeImageUpstream } from './image-upstreams.ts';
import { createAccountWithKey } from './services.ts';
import { scaled } from './time-scale.ts';

/*
 * The app of the image generation suites: the built-in simulator model plus a pixel-sized, a resolution-tier and an
 * A1111-served model (on a fake upstream), and one funded account with helpers to call and to read its usage.
 */

export interface GenerateBody {
  id: string;
  images: string[];
  timing: Record<string, number>;
  request: Record<string, unknown>;
}
export interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

export const CENT = 10_000_000n; // 0.01 USD in nano-units
const price = (usd: number) => ({ usd, diem: usd });

/** Extra image models of each sizing style, one on the fake A1111 upstream. */
function operatorConfig(upstreamUrl: string) {
  return {
    providers: [{ id: 'fake-a1111', type: 'automatic1111', baseUrl: upstreamUrl, timeoutMs: 3_000, maxRetries: 0 }],
    models: [
      {
        id: 'test-pixel-image',
        type: 'image',
        name: 'Pixel-sized test model',
        constraints: { promptCharacterLimit: 100, steps: { default: 10, max: 20 }, widthHeightDivisor: 16 },
        pricing: { generation: price(0.02) },
        provider: 'simulator',
      },
      {
        id: 'test-tier-image',
        type: 'image',
        name: 'Resolution-tier test model',
        constraints: {
          promptCharacterLimit: 1_000,
          steps: { default: 8, max: 30 },
          widthHeightDivisor: 16,
          aspectRatios: ['1:1', '16:9'],
          resolutions: ['1K', '2K'],
          defaultResolution: '1K',
        },
        pricing: { resolutions: { '1K': price(0.03), '2K': price(0.05) } },
        provider: 'simulator',
      },
      {
        id: 'test-a1111-image',
        type: 'image',
        name: 'A1111 test model',
        constraints: { promptCharacterLimit: 1_000, steps: { default: 20, max: 50 }, widthHeightDivisor: 8 },
        pricing: { generation: price(0.02) },
        providers: [{ id: 'fake-a1111', upstreamModel: 'sdxl-base.safetensors' }],
      },
      {
        id: 'test-a1111-marked',
        type: 'image',
        name: 'A1111 test model, watermarked by the operator',
        watermark: true,
        pricing: { generation: price(0.02) },
        provider: 'fake-a1111',
      },
      {
        id: 'test-sim-unmarked',
        type: 'image',
        name: 'Simulator test model without the watermark',
        watermark: false,
        pricing: { generation: price(0.02) },
        provider: 'simulator',
      },
    ],
  };
}

/** Registers beforeAll/afterAll for a describe block; the state is filled before its tests run. */
export function useImageApp(creditUsd: number) {
  const state = {} as { t: TestApp; upstream: FakeImageUpstream; secret: string; accountId: string; dir: string };
  const credit = BigInt(creditUsd) * 1_000_000_000n;

  const generate = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await state.t.call('/api/v1/image/generate', { body, key: state.secret, headers });
    return response;
  };
  const generateJson = async (body: unknown) => {
    const response = await generate(body);
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as GenerateBody & ErrorBody,
    };
  };
  const balance = async () =>
    (await state.t.app.services.billing.balancesOf(state.accountId)).find((entry) => entry.currency === 'USD')!;
  const usage = () =>
    state.t.app.database.db
      .selectFrom('usage_entries')
      .selectAll()
      .where('account_id', '=', state.accountId)
      .orderBy('created_at')
      .execute();

  /** The usage entries once every settlement so far is written (their sum equals the balance change). */
  const settledUsage = async () => {
    let entries: Awaited<ReturnType<typeof usage>> = [];
    await eventually(async () => {
      entries = await usage();
      const charged = entries.reduce((sum, entry) => sum - entry.amount, 0n);
      expect(credit - (await balance()).amount).toBe(charged);
    }, 15_000);
    return entries;
  };
  /** The usage entries written after this call (entries of one batch can share a timestamp). */
  const newEntries = async () => {
    const ids = new Set((await usage()).map((entry) => entry.id));
    // Settlements are written after the answer (balance leases): wait for them.
    return async (count = 1) => {
      let found: Awaited<ReturnType<typeof usage>> = [];
      await eventually(async () => {
        found = (await usage()).filter((entry) => !ids.has(entry.id));
        expect(found.length).toBeGreaterThanOrEqual(count);
      }, 15_000);
      return found;
    };
  };

  beforeAll(async () => {
    state.upstream = await startImageUpstream();
    state.dir = await mkdtemp(join(tmpdir(), 'lagoon-images-'));
    const path = join(state.dir, 'operator.json');
    await writeFile(path, JSON.stringify(operatorConfig(state.upstream.url)));
    state.t = await createTestApp({ LAGOON_CONFIG: path });
    const account = await createAccountWithKey(state.t.app.services, {
      credit: { USD: String(creditUsd) },
      type: 'INFERENCE',
    });
    state.secret = account.secret;
    state.accountId = account.accountId;
  }, scaled(60_000));
  afterAll(async () => {
    await state.t.close();
    await Promise.all([state.upstream.close(), rm(state.dir, { recursive: true, force: true })]);
  });
  return { state, generate, generateJson, balance, usage, settledUsage, newEntries };
}
