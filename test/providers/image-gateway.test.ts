import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError, ValidationError } from '../../src/errors.ts';
import type { ProviderConfig } from '../../src/operator-config/schema.ts';
import type { GenerateImageRequest, ImageEngine } from '../../src/providers/image/image-engine.ts';
import { ImageGateway } from '../../src/providers/image/image-gateway.ts';
import { eventually } from '../helpers/eventually.ts';
import { scaled } from '../helpers/time-scale.ts';
import { startImageUpstream, type FakeImageUpstream } from '../helpers/image-upstreams.ts';

const request: GenerateImageRequest = {
  prompt: 'a quiet bay',
  width: 256,
  height: 192,
  seed: 5,
  steps: 8,
  variants: 1,
};

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

let a1111: FakeImageUpstream;
let openai: FakeImageUpstream;
let clock = 1_000_000;
const gateways: ImageGateway[] = [];
const observed: { provider: string; operation: string; outcome: string }[] = [];

function gateway(overrides: Partial<ProviderConfig> = {}, extra: readonly ImageEngine[] = []): ImageGateway {
  // Room for a busy host to render an answer (the timeout test sets its own): a 500 ms deadline failed over to `oa`.
  const common = { timeoutMs: scaled(10_000), maxRetries: 1, cooldownMs: 60_000, ...overrides };
  const created = new ImageGateway({
    providers: [
      { id: 'sd', type: 'automatic1111', baseUrl: a1111.url, options: { sampler: 'DPM++ 2M' }, ...common },
      { id: 'oa', type: 'openai-compatible', baseUrl: `${openai.url}/v1`, ...common },
      { id: 'simulator', type: 'simulator' },
      { id: 'search', type: 'searxng', baseUrl: 'http://127.0.0.1:9' },
    ],
    metrics: {
      observeUpstream: (provider, operation, outcome) => void observed.push({ provider, operation, outcome }),
    },
    extra: extra.map((engine) => ({ engine, maxRetries: 0, cooldownMs: 1_000 })),
    now: () => clock,
  });
  gateways.push(created);
  return created;
}

const sd = { providerId: 'sd', upstreamModel: 'default' };
const oa = { providerId: 'oa', upstreamModel: 'sd-turbo' };
const sim = { providerId: 'simulator', upstreamModel: 'lagoon-sim-image' };

describe('ImageGateway', () => {
  beforeAll(async () => {
    [a1111, openai] = await Promise.all([startImageUpstream(), startImageUpstream()]);
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((created) => created.close()));
    a1111.requests.length = 0;
    openai.requests.length = 0;
    observed.length = 0;
  });
  afterAll(async () => {
    await Promise.all([a1111.close(), openai.close()]);
  });

  it('should generate through A1111 with the configured sampler and no checkpoint override for "default"', async () => {
    const answer = await gateway().generate([sd], { ...request, variants: 2 }, {});
    expect(answer).toMatchObject({ providerId: 'sd', upstreamModel: 'default', simulated: false });
    expect(answer.result).toHaveLength(2);
    const meta = await sharp(answer.result[0]!.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([256, 192]);
    expect(a1111.requests[0]!.body).toMatchObject({ sampler_name: 'DPM++ 2M', batch_size: 2, seed: 5 });
    expect(a1111.requests[0]!.body).not.toHaveProperty('override_settings');
    expect(observed).toEqual([{ provider: 'sd', operation: 'image_generate', outcome: 'ok' }]);
  });

  it('should retry a 5xx once on the same provider, then succeed', async () => {
    a1111.queue({ kind: 'status', status: 503 });
    const answer = await gateway().generate([sd, oa], request, {});
    expect(answer.providerId).toBe('sd');
    expect(a1111.requests).toHaveLength(2);
    expect(openai.requests).toHaveLength(0);
  });

  it('should fall back to the next binding after the retries, and report which one answered', async () => {
    a1111.queue({ kind: 'status', status: 500 }, { kind: 'reset' });
    const answer = await gateway().generate([sd, oa], request, {});
    expect(answer).toMatchObject({ providerId: 'oa', upstreamModel: 'sd-turbo' });
    expect(a1111.requests).toHaveLength(2);
    expect(openai.requests).toHaveLength(1);
  });

  it('should time out a slow upstream with REQUEST_TIMEOUT and retry', async () => {
    // Stretched with the host's load: on a busy host the retry's request may reach the fake upstream only after the
    // gateway gave up on it, and would then be counted by the next test.
    a1111.queue({ kind: 'delay', ms: scaled(4_000) }, { kind: 'delay', ms: scaled(4_000) });
    const error = await failure(gateway({ timeoutMs: scaled(300) }).generate([sd], request, {}));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('REQUEST_TIMEOUT');
    await eventually(async () => expect(a1111.requests).toHaveLength(2));
  });

  it('should not retry nor fall back on a 400 (the caller’s mistake)', async () => {
    a1111.queue({ kind: 'status', status: 400 });
    const error = await failure(gateway().generate([sd, oa], request, {}));
    expect(error).toBeInstanceOf(ValidationError);
    expect(a1111.requests).toHaveLength(1);
    expect(openai.requests).toHaveLength(0);
  });

  it('should cool a provider down after three failed calls and put it last', async () => {
    const created = gateway({ maxRetries: 0 });
    for (let i = 0; i < 3; i += 1) {
      a1111.queue({ kind: 'status', status: 500 });
      await created.generate([sd, oa], request, {});
    }
    a1111.requests.length = 0;
    const answer = await created.generate([sd, oa], request, {});
    expect(answer.providerId).toBe('oa');
    expect(a1111.requests).toHaveLength(0);
    clock += 61_000;
    expect((await created.generate([sd, oa], request, {})).providerId).toBe('sd');
  });

  it('should stop everything when the caller aborts', async () => {
    a1111.queue({ kind: 'delay', ms: 2_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await failure(
      gateway({ timeoutMs: 5_000 }).generate([sd, oa], request, { signal: controller.signal }),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(a1111.requests).toHaveLength(1);
    expect(openai.requests).toHaveLength(0);
    expect(observed.at(-1)?.outcome).toBe('cancelled');
  });

  it('should answer 503 for bindings to unknown or non-image providers', async () => {
    const error = await failure(gateway().generate([{ providerId: 'search', upstreamModel: 'x' }], request, {}));
    expect((error as UpstreamError).code).toBe('SERVICE_UNAVAILABLE');
  });

  it('should refuse edit and upscale with a 400 naming the model when no bound engine can', async () => {
    // A1111, OpenAI-compatible and simulator engines all edit; an engine that only generates cannot.
    const generator: ImageEngine = { id: 'generator', simulated: false, generate: () => Promise.resolve([]) };
    const created = gateway({}, [generator]);
    const only = [{ providerId: 'generator', upstreamModel: 'g' }];
    const edit = await failure(created.edit(only, { prompt: 'x', images: [], width: 8, height: 8 }, {}));
    expect(edit).toBeInstanceOf(ValidationError);
    expect((edit as ValidationError).message).toContain('cannot edit');
    expect((edit as ValidationError).issues[0]?.path).toEqual(['model']);
    const upscale = await failure(created.upscale(only, { image: Buffer.alloc(0), scale: 2, creativity: 0 }, {}));
    expect((upscale as ValidationError).message).toContain('cannot upscale');
    expect(a1111.requests).toHaveLength(0);
  });

  it('should pass edit to the first engine that has it (an extra engine)', async () => {
    const editor: ImageEngine = {
      id: 'editor',
      simulated: false,
      generate: () => Promise.resolve([]),
      edit: (_model, edit) => Promise.resolve({ bytes: edit.images[0]!, adult: false }),
    };
    const answer = await gateway({}, [editor]).edit(
      [sd, { providerId: 'editor', upstreamModel: 'e' }],
      { prompt: 'x', images: [Buffer.from('picture')], width: 8, height: 8 },
      {},
    );
    expect(answer).toMatchObject({ providerId: 'editor', result: { adult: false } });
  });

  it('should list styles from A1111, the simulator, or none for an OpenAI-compatible engine', async () => {
    const created = gateway();
    expect((await created.styles([sd], {})).result).toEqual(a1111.styles);
    expect((await created.styles([sim], {})).result).toContain('Anime');
    expect((await created.styles([oa], {})).result).toEqual([]);
  });

  it('should read the safety checker verdicts of A1111 and of an OpenAI-compatible upstream', async () => {
    a1111.queue({ kind: 'adult' });
    openai.queue({ kind: 'adult' });
    const created = gateway();
    expect((await created.generate([sd], request, {})).result[0]!.adult).toBe(true);
    expect((await created.generate([oa], request, {})).result[0]!.adult).toBe(true);
    expect((await created.generate([sd], request, {})).result[0]!.adult).toBe(false);
  });

  it('should render the simulator deterministically at any size, flagged adult by the test hook', async () => {
    const created = gateway();
    const odd = { ...request, width: 333, height: 77 };
    const [first, second] = await Promise.all([created.generate([sim], odd, {}), created.generate([sim], odd, {})]);
    expect(first.simulated).toBe(true);
    expect(first.result[0]!.bytes.equals(second.result[0]!.bytes)).toBe(true);
    const meta = await sharp(first.result[0]!.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([333, 77]);
    const other = await created.generate([sim], { ...odd, seed: 6 }, {});
    expect(other.result[0]!.bytes.equals(first.result[0]!.bytes)).toBe(false);
    const adult = await created.generate([sim], { ...odd, prompt: 'x [simulate:adult]' }, {});
    expect(adult.result[0]!.adult).toBe(true);
    expect(first.result[0]!.adult).toBe(false);
  });

  it('should refuse a bad automatic1111 options block at start', () => {
    expect(() => gateway({ options: { sampler: 3 } })).toThrow(/options\.sampler/);
  });
});
