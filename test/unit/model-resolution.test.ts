import { describe, expect, it } from 'vitest';
import { parseModelName, resolveChatModel } from '../../src/chat/model-resolution.ts';
import { fakeCatalog, fakeCharacters, keyAuth, textModel } from '../helpers/fakes.ts';

/*
 * What a chat request's `model` resolves to, on an in-memory catalog: over HTTP these rules are reached only
 * through whole completions (test/rest/chat.test.ts), one case per call.
 */

const catalog = fakeCatalog(
  [
    textModel('small', { traits: ['default', 'fastest'] }),
    textModel('large', { traits: ['most_intelligent'] }),
    textModel('public-model', { privacy: 'anonymized' }),
    textModel('down', { offline: true }),
    textModel('painter', { type: 'image' }),
  ],
  { 'gpt-4o': 'large' },
);
const characters = fakeCharacters({ pirate: { modelId: 'large' }, ghost: { modelId: 'no-such-model' } });
const deps = { catalog, characters };

describe('chat model resolution (in-memory catalog)', () => {
  it('should resolve a model id, a trait and a compatibility name', async () => {
    expect((await resolveChatModel(deps, keyAuth(), 'large', undefined)).model.id).toBe('large');
    expect((await resolveChatModel(deps, keyAuth(), 'fastest', undefined)).model.id).toBe('small');
    expect((await resolveChatModel(deps, keyAuth(), 'gpt-4o', undefined)).model.id).toBe('large');
  });

  it("should let a character's model replace a trait, but keep an explicit id or compatibility name", async () => {
    const viaTrait = await resolveChatModel(deps, keyAuth(), 'default', 'pirate');
    expect(viaTrait.model.id).toBe('large');
    expect(viaTrait.character?.slug).toBe('pirate');
    expect((await resolveChatModel(deps, keyAuth(), 'small', 'pirate')).model.id).toBe('small');
    expect((await resolveChatModel(deps, keyAuth(), 'gpt-4o', 'pirate')).model.id).toBe('large');
    // A character whose model is gone leaves the trait's choice in place.
    expect((await resolveChatModel(deps, keyAuth(), 'default', 'ghost')).model.id).toBe('small');
  });

  it('should refuse unknown names and models of another type with INVALID_MODEL, naming the type', async () => {
    await expect(resolveChatModel(deps, keyAuth(), 'nope', undefined)).rejects.toMatchObject({
      code: 'INVALID_MODEL',
      message: expect.stringMatching(/^Unknown model nope/),
    });
    await expect(resolveChatModel(deps, keyAuth(), 'painter', undefined)).rejects.toMatchObject({
      code: 'INVALID_MODEL',
      message: expect.stringContaining('is a image model'),
    });
    await expect(resolveChatModel(deps, keyAuth(), 'small', 'no-such-character')).rejects.toMatchObject({
      code: 'CHARACTER_NOT_FOUND',
    });
  });

  it('should hold a key to its privacy setting and refuse an offline model with MODEL_OFFLINE', async () => {
    const privateOnly = keyAuth({ modelPrivacy: 'PRIVATE_ONLY' });
    await expect(resolveChatModel(deps, privateOnly, 'public-model', undefined)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: expect.stringContaining('only use private models'),
    });
    expect((await resolveChatModel(deps, privateOnly, 'small', undefined)).model.id).toBe('small');
    expect((await resolveChatModel(deps, keyAuth(), 'public-model', undefined)).model.id).toBe('public-model');
    await expect(resolveChatModel(deps, keyAuth(), 'down', undefined)).rejects.toMatchObject({
      code: 'MODEL_OFFLINE',
    });
  });
});

describe('model name suffixes', () => {
  it('should split a name from its service_parameters suffix, URL-decoded, ignoring unknown keys', () => {
    expect(parseModelName('small')).toEqual({ name: 'small', suffix: {} });
    expect(
      parseModelName('small:strip_thinking_response=true&character_slug=sea%20dog&enable_web_search=auto&x=1&'),
    ).toEqual({
      name: 'small',
      suffix: { strip_thinking_response: true, character_slug: 'sea dog', enable_web_search: 'auto' },
    });
    expect(parseModelName('small:disable_thinking=false').suffix).toEqual({ disable_thinking: false });
  });

  it('should refuse a suffix without a name, a non-boolean flag, bad encoding and a bad value with 400', () => {
    for (const [raw, message] of [
      [':disable_thinking=true', 'A model name is required'],
      ['small:disable_thinking=yes', 'must be true or false'],
      ['small:character_slug=%E0%A4%A', 'not valid URL encoding'],
      ['small:enable_web_search=sometimes', 'enable_web_search in the model suffix'],
    ] as const) {
      expect(() => parseModelName(raw), raw).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
      expect(() => parseModelName(raw), raw).toThrow(message);
    }
  });
});
