import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import sharp from 'sharp';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { toneSample } from '../helpers/audio.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * examples/compat-original.yaml: the original service's ids are model aliases, each listed under its own id and
 * type, retrievable, advertising what its local target does and priced as the original where the target is
 * priced the same way (docs/configuration.md, "Clients of the original service").
 */

const COMPAT_CONFIG = join(import.meta.dirname, '../../examples/compat-original.yaml');
const aliases = (
  parseYaml(readFileSync(COMPAT_CONFIG, 'utf8')) as { models: { id: string; type: string; aliasOf?: string }[] }
).models.filter((model) => model.aliasOf !== undefined);
const USD_NANO = 1_000_000_000;

interface ModelRecord {
  id: string;
  type: string;
  model_spec: {
    name: string;
    pricing: Record<string, unknown>;
    capabilities?: Record<string, unknown>;
    constraints?: Record<string, unknown>;
    voices?: string[];
    voice_cloning?: unknown;
  };
}

describe(`examples/compat-original.yaml: the original ids as model aliases (${testDatabaseKind})`, () => {
  let t: TestApp;
  let client: OpenAI;
  let secret: string;
  let accountId: string;

  const record = async (id: string) => {
    const response = await t.call(`/api/v1/models/${id}`, { key: null });
    expect(response.status, id).toBe(200);
    return (await response.json()) as ModelRecord;
  };

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_CONFIG: COMPAT_CONFIG });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
    client = new OpenAI({
      apiKey: secret,
      baseURL: 'http://lagoon.test/api/v1',
      maxRetries: 0,
      timeout: 60_000,
      fetch: (url, init) => t.app.fetch(new Request(url, init)),
    });
  }, 60_000);
  afterAll(async () => t.close());

  it('should list every original id (and the ids clients send by default) under its type', async () => {
    // The public list had 328 models when the file was written, plus the three default ids it lacks.
    expect(aliases.length).toBeGreaterThanOrEqual(331);
    const ids = aliases.map((alias) => alias.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        'kimi-k2-5',
        'nano-banana-pro',
        'venice-uncensored',
        'gpt-4o-mini-tts',
        'gpt-4o-transcribe',
      ]),
    );
    const all = (await (await t.call('/api/v1/models?type=all', { key: null })).json()) as { data: ModelRecord[] };
    const typeOf = new Map(all.data.map((model) => [model.id, model.type]));
    for (const alias of aliases) expect(typeOf.get(alias.id), alias.id).toBe(alias.type);
    for (const type of ['text', 'image', 'tts', 'asr']) {
      const listed = (await (await t.call(`/api/v1/models?type=${type}`, { key: null })).json()) as {
        data: ModelRecord[];
      };
      const expected = aliases.filter((alias) => alias.type === type).map((alias) => alias.id);
      expect(listed.data.map((model) => model.id)).toEqual(expect.arrayContaining(expected));
    }
    for (const alias of aliases) expect((await record(alias.id)).type).toBe(alias.type);
    // The aliases replace the compatibility names of the file: only the built-in OpenAI names are left.
    const mapping = (await (await t.call('/api/v1/models/compatibility_mapping', { key: null })).json()) as {
      data: Record<string, string>;
    };
    expect(Object.keys(mapping.data)).not.toContain('kimi-k2-5');
  });

  it('should retrieve kimi-k2-5 with the openai client, advertising what its target does', async () => {
    const retrieved = await client.models.retrieve('kimi-k2-5');
    expect(retrieved).toMatchObject({ id: 'kimi-k2-5', object: 'model' });
    const kimi = await record('kimi-k2-5');
    const target = await record('compat-reasoner');
    expect(kimi.model_spec.name).toBe('Kimi K2.5');
    // Only the target's capabilities, never the original's claims (its supportsReasoningEffort was false).
    expect(kimi.model_spec.capabilities).toEqual(target.model_spec.capabilities);
    expect(kimi.model_spec.capabilities).toMatchObject({
      supportsReasoning: true,
      supportsReasoningEffort: true,
      supportsResponseSchema: true,
      supportsFunctionCalling: true,
      supportsVision: true,
      supportsAudioInput: true,
      supportsVideoInput: true,
    });
    expect(kimi.model_spec.pricing).toEqual({
      input: { usd: 0.56, diem: 0.56 },
      cache_input: { usd: 0.22, diem: 0.22 },
      output: { usd: 3.5, diem: 3.5 },
    });
    const answer = await client.chat.completions.create({
      model: 'kimi-k2-5',
      messages: [{ role: 'user', content: 'Name a tide' }],
      reasoning_effort: 'high',
    });
    expect(answer.model).toBe('kimi-k2-5');
    expect(answer.choices[0]!.message.content?.length).toBeGreaterThan(0);
  });

  it('should take image and audio parts under the original chat ids, reasoning or not', async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#2080c0' } })
      .png()
      .toBuffer();
    const wav = await toneSample(1.2, 440, 'wav');
    for (const model of ['kimi-k2-5', 'venice-uncensored']) {
      const answer = await client.chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
              { type: 'input_audio', input_audio: { data: wav.toString('base64'), format: 'wav' } },
            ],
          },
        ],
      });
      expect(answer.choices[0]!.message.content).toMatch(/^Received 1 image 64×64 png, 1 audio clip wav 1\.2 s\./);
    }
  });

  it('should clone with tts-chatterbox-hd, whose record says so and lists its voices', async () => {
    const chatterbox = await record('tts-chatterbox-hd');
    expect(chatterbox.model_spec.voice_cloning).toMatchObject({ mode: 'zero_shot' });
    expect(chatterbox.model_spec.voices).toContain('Aurora');
    const speech = await client.audio.speech.create({ model: 'tts-chatterbox-hd', voice: 'Aurora', input: 'Hello' });
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(100);

    const form = new FormData();
    form.append('model', 'tts-chatterbox-hd');
    form.append('file', new Blob([new Uint8Array(await toneSample(6, 220, 'wav'))]), 'sample.wav');
    const cloned = await t.app.fetch(
      new Request(`${BASE}/api/v1/audio/voices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}` },
        body: form,
      }),
    );
    expect(cloned.status).toBe(200);
    // The handle is `id` in the original's answer (`voice` in older answers of this server).
    const made = (await cloned.json()) as { id?: string; voice?: string };
    const handle = made.id ?? made.voice;
    expect(handle).toMatch(/^vv_/);
    const spoken = await client.audio.speech.create({ model: 'tts-chatterbox-hd', voice: handle!, input: 'Hello' });
    expect((await spoken.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  it('should price nano-banana-pro per resolution tier and charge the 2K price for a 2K picture', async () => {
    const banana = await record('nano-banana-pro');
    expect(banana.model_spec.pricing).toMatchObject({
      resolutions: { '1K': { usd: 0.18 }, '2K': { usd: 0.23 }, '4K': { usd: 0.35 } },
    });
    expect(banana.model_spec.pricing).not.toHaveProperty('generation');
    expect(banana.model_spec.constraints).toMatchObject({ resolutions: ['1K', '2K', '4K'] });
    const response = await t.call('/api/v1/image/generate', {
      key: secret,
      body: { model: 'nano-banana-pro', prompt: 'a bay', aspect_ratio: '1:1', resolution: '2K', format: 'png' },
    });
    expect(response.status).toBe(200);
    const { images } = (await response.json()) as { images: string[] };
    const meta = await sharp(Buffer.from(images[0]!, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([2048, 2048]);
    await eventually(async () => {
      const entries = await t.app.database.db
        .selectFrom('usage_entries')
        .select(['model_id', 'amount'])
        .where('account_id', '=', accountId)
        .where('model_id', '=', 'nano-banana-pro')
        .execute();
      expect(entries).toEqual([{ model_id: 'nano-banana-pro', amount: -BigInt(Math.round(0.23 * USD_NANO)) }]);
    }, 15_000);
  });
});
