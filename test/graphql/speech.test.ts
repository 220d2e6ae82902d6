import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { probeAudio, toneSample } from '../helpers/audio.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { fundedAccount } from '../helpers/uploads.ts';
import { scaled } from '../helpers/time-scale.ts';

/* GraphQL synthesizeSpeech, cloneVoice and voices, against the built-in eSpeak NG engine. */

const SPEAK = `mutation Speak($input: SpeechInput!, $includeBase64: Boolean) {
  synthesizeSpeech(input: $input, includeBase64: $includeBase64) {
    __typename
    ... on MutationSynthesizeSpeechSuccess {
      data { file { url contentType byteSize base64 } contentType format model voice characters charged currency }
    }
    ... on ValidationError { message issues { path message } }
    ... on Error { message code }
  }
}`;

const CLONE = `mutation Clone($file: File!, $model: String) {
  cloneVoice(file: $file, model: $model) {
    __typename
    ... on MutationCloneVoiceSuccess { data { voice model sampleSeconds expiresAt charged currency } }
    ... on Error { message code }
  }
}`;

const VOICES = `query Voices($model: String) {
  voices(model: $model) {
    __typename
    ... on QueryVoicesSuccess { data { model voices defaultVoice cloned { voice sampleSeconds } } }
    ... on Error { message code }
  }
}`;

interface Speak {
  synthesizeSpeech: {
    __typename: string;
    data?: {
      file: { url: string; contentType: string; byteSize: number; base64: string | null };
      contentType: string;
      format: string;
      model: string;
      voice: string;
      characters: number;
      charged: string;
      currency: string;
    };
    message?: string;
    code?: string;
    issues?: { path: string[]; message: string }[];
  };
}

describe(`GraphQL speech (${testDatabaseKind})`, () => {
  let t: TestApp;
  let account: Awaited<ReturnType<typeof fundedAccount>>;

  beforeAll(async () => {
    t = await createTestApp();
    account = await fundedAccount(t, '2');
  }, scaled(60_000));
  afterAll(async () => t.close());

  it(
    'should synthesise speech as a MediaFile (signed URL and base64) and charge the characters',
    async () => {
      const before = await account.balance();
      const input = 'Hello from GraphQL. This is real speech.';
      const { data, errors } = await t.graphql<Speak>(
        SPEAK,
        {
          input: { input, model: 'tts-1', voice: 'am_adam', responseFormat: 'OPUS', speed: 1.25 },
          includeBase64: true,
        },
        account.secret,
      );
      expect(errors).toBeUndefined();
      const result = data!.synthesizeSpeech.data!;
      expect(result).toMatchObject({
        contentType: 'audio/ogg',
        format: 'OPUS',
        model: 'lagoon-sim-speech',
        voice: 'am_adam',
        characters: input.length,
        currency: 'USD',
      });
      const audio = Buffer.from(result.file.base64!, 'base64');
      expect(result.file).toMatchObject({ contentType: 'audio/ogg', byteSize: audio.byteLength });
      const probed = await probeAudio(audio);
      expect(probed.codec).toBe('opus');
      expect(probed.duration).toBeGreaterThan(1);
      // The signed URL serves the same bytes, without a key.
      const url = new URL(result.file.url);
      const fetched = await t.app.fetch(new Request(`${BASE}${url.pathname}${url.search}`));
      expect(fetched.status).toBe(200);
      expect(Buffer.from(await fetched.arrayBuffer()).equals(audio)).toBe(true);
      const cost = BigInt(input.length) * 3_500n;
      expect(result.charged).toBe((Number(cost) / 1e9).toString());
      expect(before.amount - (await account.balance()).amount).toBe(cost);
      expect((await account.usage()).at(-1)).toMatchObject({ sku: 'lagoon-sim-speech-tts-input-mchars', units: '40' });
    },
    scaled(60_000),
  );

  it('should answer a typed ValidationError naming the field', async () => {
    const { data } = await t.graphql<Speak>(SPEAK, { input: { input: 'hi', temperature: 2.5 } }, account.secret);
    expect(data!.synthesizeSpeech.__typename).toBe('ValidationError');
    expect(data!.synthesizeSpeech.issues?.[0]?.path).toEqual(['temperature']);
    const model = await t.graphql<Speak>(SPEAK, { input: { input: 'hi', model: 'nope' } }, account.secret);
    expect(model.data!.synthesizeSpeech.__typename).toBe('InvalidModelError');
  });

  it(
    'should clone a voice from an upload and list it among the model voices',
    async () => {
      const form = new FormData();
      form.append(
        'operations',
        JSON.stringify({ query: CLONE, variables: { file: null, model: 'lagoon-sim-speech' } }),
      );
      form.append('map', JSON.stringify({ 0: ['variables.file'] }));
      form.append('0', new Blob([new Uint8Array(await toneSample(6, 130, 'wav'))]), 'me.wav');
      const response = await t.app.fetch(
        new Request(`${BASE}/graphql`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${account.secret}`,
            accept: 'application/graphql-response+json, application/json',
          },
          body: form,
        }),
      );
      const body = (await response.json()) as {
        data: { cloneVoice: { __typename: string; data?: { voice: string; charged: string; model: string } } };
      };
      const cloned = body.data.cloneVoice.data!;
      expect(cloned).toMatchObject({ model: 'lagoon-sim-speech', charged: '0.05' });
      expect(cloned.voice).toMatch(/^vv_/);

      const listed = await t.graphql<{
        voices: { data: { model: string; voices: string[]; defaultVoice: string; cloned: { voice: string }[] } };
      }>(VOICES, {}, account.secret);
      expect(listed.data!.voices.data).toMatchObject({
        model: 'lagoon-sim-speech',
        defaultVoice: 'af_sky',
        cloned: [{ voice: cloned.voice }],
      });
      expect(listed.data!.voices.data.voices).toContain('bm_george');

      const spoken = await t.graphql<Speak>(
        SPEAK,
        { input: { input: 'Me again.', voice: cloned.voice } },
        account.secret,
      );
      expect(spoken.data!.synthesizeSpeech.data?.voice).toBe(cloned.voice);
    },
    scaled(60_000),
  );
});
