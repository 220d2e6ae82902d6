import { afterAll, describe, expect, it } from 'vitest';
import { SpeechBusyError } from '../../src/providers/speech/espeak-pool.ts';
import { EspeakEngine } from '../../src/providers/speech/espeak.engine.ts';
import type { SpeechRequest } from '../../src/providers/speech/speech-engine.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * The built-in speech engine's cap on calls in flight: past it a call is refused at once with a 503 (the service
 * then releases its hold: nothing is charged), and a slot comes back when the audio ends or its caller goes away.
 */

const request: SpeechRequest = { text: 'One sentence.', voice: 'af_sky', format: 'mp3', speed: 1, streaming: false };

async function drain(chunks: AsyncIterable<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of chunks) bytes += chunk.byteLength;
  return bytes;
}

describe('eSpeak NG engine: calls in flight', () => {
  let opened: () => void = () => undefined;
  let gate = Promise.resolve();
  const engine = new EspeakEngine('capped', { size: 1, maxCalls: 1, beforeSentence: () => gate });
  afterAll(() => engine.close());

  it(
    'should refuse a call past the cap with a 503 and take calls again once the audio is read',
    async () => {
      gate = new Promise((resolve) => (opened = resolve));
      const first = engine.synthesize('x', request, {});
      const refused = await engine.synthesize('x', request, {}).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SpeechBusyError);
      expect((refused as SpeechBusyError).code).toBe('SERVICE_UNAVAILABLE');
      expect((refused as SpeechBusyError).data()).toEqual({ retryAfterSeconds: 1 });
      opened();
      expect(await drain((await first).chunks)).toBeGreaterThan(0);
      const again = await engine.synthesize('x', request, {});
      expect(await drain(again.chunks)).toBeGreaterThan(0);
    },
    scaled(60_000),
  );

  it(
    'should give the slot back when the caller goes away before reading the audio',
    async () => {
      const controller = new AbortController();
      const unread = await engine.synthesize('x', request, { signal: controller.signal });
      expect(unread.contentType).toBe('audio/mpeg');
      await expect(engine.synthesize('x', request, {})).rejects.toBeInstanceOf(SpeechBusyError);
      controller.abort();
      const next = await engine.synthesize('x', request, {});
      expect(await drain(next.chunks)).toBeGreaterThan(0);
    },
    scaled(60_000),
  );
});
