import type { AccountAuthContext, ModelPrivacyMode } from '../../src/auth/auth-context.ts';
import type { CatalogService, ModelLookup } from '../../src/catalog/catalog.service.ts';
import type { CatalogModel } from '../../src/catalog/model.ts';
import type { Character, CharacterService } from '../../src/characters/character.service.ts';
import { NotFoundError } from '../../src/errors.ts';
import type { TextPricing } from '../../src/operator-config/schema.ts';

/*
 * In-memory stand-ins for services, for tests of logic that sits on top of them (model resolution, pricing)
 * without a database or an app. Each fake implements only the methods that logic calls.
 */

type Pair = { usd: string; diem: string };
const pair = (usd: string): Pair => ({ usd, diem: usd });

/** A text model with token prices in USD (the same amount in DIEM), per 1M tokens as in the operator config. */
export function textModel(
  id: string,
  options: {
    input?: string;
    output?: string;
    cacheInput?: string;
    extended?: { threshold: number; input: string; output: string };
    traits?: string[];
    privacy?: CatalogModel['privacy'];
    offline?: boolean;
    type?: CatalogModel['type'];
  } = {},
): CatalogModel {
  const pricing = {
    input: pair(options.input ?? '1'),
    output: pair(options.output ?? '2'),
    ...(options.cacheInput && { cache_input: pair(options.cacheInput) }),
    ...(options.extended && {
      extended: {
        context_token_threshold: options.extended.threshold,
        input: pair(options.extended.input),
        output: pair(options.extended.output),
      },
    }),
  } as unknown as TextPricing;
  return {
    id,
    type: options.type ?? 'text',
    ownedBy: 'test',
    created: new Date('2025-01-01T00:00:00Z'),
    privacy: options.privacy ?? 'private',
    offline: options.offline ?? false,
    contextLength: 32_768,
    traits: options.traits ?? [],
    spec: { name: id, description: '', pricing: pricing as unknown as Record<string, unknown> } as CatalogModel['spec'],
    providers: [],
  };
}

/** A catalog of the given models; traits come from each model's `traits`, compatibility names from `aliases`. */
export function fakeCatalog(models: readonly CatalogModel[], aliases: Record<string, string> = {}): CatalogService {
  const byId = new Map(models.map((model) => [model.id, model]));
  // Typed from the service, so a change of its signature fails the typecheck here, not at run time.
  const lookupModel: CatalogService['lookupModel'] = async (name, type): Promise<ModelLookup> => {
    const direct = byId.get(name);
    if (direct?.type === type) return { model: direct, via: 'id' };
    const traitTarget = models.find((model) => model.type === type && model.traits.includes(name));
    if (traitTarget) return { model: traitTarget, via: 'trait' };
    const mapped = aliases[name] === undefined ? undefined : byId.get(aliases[name]);
    if (mapped?.type === type) return { model: mapped, via: 'mapping' };
    return { model: undefined, otherType: direct?.type };
  };
  return { lookupModel } as unknown as CatalogService;
}

/** Characters by slug; an unknown slug is 404 CHARACTER_NOT_FOUND as in the real service. */
export function fakeCharacters(characters: Record<string, { modelId: string }>): CharacterService {
  const getBySlug = async (_auth: unknown, slug: string): Promise<Character> => {
    const found = characters[slug];
    if (!found) throw new NotFoundError(`Character ${slug} not found`, 'CHARACTER_NOT_FOUND');
    return { slug, name: slug, modelId: found.modelId } as unknown as Character;
  };
  return { getBySlug } as unknown as CharacterService;
}

/** An API key's auth context, as authentication would produce it. */
export function keyAuth(options: { modelPrivacy?: ModelPrivacyMode } = {}): AccountAuthContext {
  return {
    kind: 'apiKey',
    requestId: 'req-test',
    accountId: 'account-1',
    apiKey: {
      id: 'key-1',
      accountId: 'account-1',
      type: 'INFERENCE',
      limitPeriod: 'EPOCH',
      modelPrivacy: options.modelPrivacy ?? 'ALL',
      limits: { usd: null, diem: null },
      expiresAt: null,
    },
  };
}
