import { describe, expect, it } from 'vitest';
import { atempoChain } from '../../src/providers/speech/ffmpeg.ts';
import { decodeToPcm } from '../../src/providers/speech/ffmpeg.ts';
import {
  ESPEAK_VOICES,
  espeakLanguage,
  espeakVoiceFor,
  rateFor,
  splitSentences,
} from '../../src/providers/speech/espeak.engine.ts';
import { estimatePitchHz, voiceSettingsFor } from '../../src/providers/speech/pitch.ts';
import { toneSample } from '../helpers/audio.ts';

/* The eSpeak NG engine's pieces: pitch tracking for cloned voices, sentence splitting, speed and language. */

describe('speech engine helpers', () => {
  it.each([110, 150, 220, 300])('should estimate the pitch of a %i Hz tone within 5 percent', async (hz) => {
    const decoded = await decodeToPcm(await toneSample(3, hz, 'wav'), { rate: 8_000, maxSeconds: 60 });
    expect(decoded.seconds).toBeCloseTo(3, 1);
    const estimate = estimatePitchHz(decoded.samples, decoded.rate)!;
    expect(Math.abs(estimate - hz) / hz).toBeLessThan(0.05);
  });

  it('should find no pitch in silence', () => {
    expect(estimatePitchHz(new Int16Array(8_000), 8_000)).toBeUndefined();
  });

  it('should pick the male or female variant and a pitch from the speaker frequency', () => {
    expect(voiceSettingsFor(110)).toMatchObject({ gender: 'male' });
    expect(voiceSettingsFor(220)).toMatchObject({ gender: 'female' });
    expect(voiceSettingsFor(100).pitch).toBeLessThan(voiceSettingsFor(140).pitch);
    expect(voiceSettingsFor(1000).pitch).toBe(99);
    expect(voiceSettingsFor(undefined)).toMatchObject({ gender: 'female', pitch: 50 });
  });

  it("should give other models' voice ids a voice of their own, the same every time", () => {
    expect(espeakVoiceFor('bm_george')).toEqual(ESPEAK_VOICES.bm_george);
    // Kokoro-style ids keep accent and gender.
    expect(espeakVoiceFor('bf_lily')).toMatchObject({ accent: 'gb', variant: expect.stringMatching(/^f[1-5]$/) });
    expect(espeakVoiceFor('am_puck')).toMatchObject({ accent: 'us', variant: expect.stringMatching(/^m[1-8]$/) });
    expect(espeakVoiceFor('Rachel')).toEqual(espeakVoiceFor('Rachel'));
    expect(espeakVoiceFor('constructor').variant).toMatch(/^[fm][1-8]$/);
    const names = ['Aurora', 'Blade', 'Rachel', 'Puck', 'Kore', 'Charon', 'CalmWoman', 'DeepVoiceMan', 'tara', 'zac'];
    const voices = new Set(names.map((name) => JSON.stringify(espeakVoiceFor(name))));
    expect(voices.size).toBeGreaterThanOrEqual(8);
    for (const name of names) expect(espeakVoiceFor(name).pitch).toBeGreaterThanOrEqual(34);
  });

  it('should split sentences and lines, dropping empty ones', () => {
    expect(splitSentences('Hi there. How are you?  Fine!\nNew line; done... ... \n\n')).toEqual([
      'Hi there.',
      'How are you?',
      'Fine!',
      'New line;',
      'done...',
    ]);
  });

  it('should reach speeds beyond eSpeak rates with atempo', () => {
    expect(rateFor(1)).toEqual({ rate: 175, tempo: 1 });
    expect(rateFor(4).rate).toBe(450);
    expect(rateFor(4).tempo).toBeCloseTo(700 / 450);
    expect(rateFor(0.25).rate).toBe(80);
    expect(atempoChain(1)).toBeUndefined();
    expect(atempoChain(0.25)).toBe('atempo=0.5,atempo=0.5000');
    expect(atempoChain(3)).toBe('atempo=2,atempo=1.5000');
  });

  it('should map language codes and names to eSpeak voices, ignoring unknown ones', () => {
    expect(espeakLanguage('fr')).toBe('fr-fr');
    expect(espeakLanguage('German')).toBe('de');
    expect(espeakLanguage('pt_BR')).toBe('pt-br');
    expect(espeakLanguage('klingon')).toBeUndefined();
    expect(espeakLanguage(undefined)).toBeUndefined();
  });
});
