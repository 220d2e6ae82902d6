import { modelPrivacyOf, type AccountAuthContext } from '../auth/auth-context.ts';
import type { CatalogService } from '../catalog/catalog.service.ts';
import type { CatalogModel } from '../catalog/model.ts';
import type { Character, CharacterService } from '../characters/character.service.ts';
import { clip, ForbiddenError, InvalidModelError, UpstreamError, ValidationError } from '../errors.ts';
import { SERVICE_PARAMETER_KEYS, ServiceParametersInput } from './chat.inputs.ts';

/*
 * What a request's `model` means (docs/api.md, Model names): a model id, a trait
 * (`default`, `fastest`, …) or a compatibility name, optionally followed by a feature suffix
 * `<name>:<key>=<value>&<key>=<value>` whose keys are service_parameters. Suffix values are URL-decoded,
 * booleans are `true`/`false`, unknown keys are ignored, and the suffix overrides the body.
 */

const BOOLEAN_KEYS = new Set<string>(
  SERVICE_PARAMETER_KEYS.filter((key) => key !== 'character_slug' && key !== 'enable_web_search'),
);
const KNOWN_KEYS = new Set<string>(SERVICE_PARAMETER_KEYS);

export interface ParsedModelName {
  /** The name without its suffix. */
  readonly name: string;
  /** The suffix's service_parameters (only the keys it set). */
  readonly suffix: ServiceParametersInput;
}

const suffixError = (message: string) =>
  new ValidationError(`Invalid request: model: ${message}`, [{ path: ['model'], message }]);

export function parseModelName(raw: string): ParsedModelName {
  const colon = raw.indexOf(':');
  if (colon < 0) return { name: raw, suffix: {} };
  const name = raw.slice(0, colon).trim();
  if (name === '') throw suffixError('A model name is required before ":"');
  const values: Record<string, string | boolean> = {};
  for (const pair of raw.slice(colon + 1).split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const key = decode(equals < 0 ? pair : pair.slice(0, equals));
    if (!KNOWN_KEYS.has(key)) continue;
    const value = equals < 0 ? '' : decode(pair.slice(equals + 1));
    if (BOOLEAN_KEYS.has(key)) {
      if (value !== 'true' && value !== 'false')
        throw suffixError(`${clip(key)} in the model suffix must be true or false`);
      values[key] = value === 'true';
    } else values[key] = value;
  }
  const parsed = ServiceParametersInput.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw suffixError(
      `${String(issue?.path[0] ?? 'suffix')} in the model suffix: ${issue?.message ?? 'invalid value'}`,
    );
  }
  return { name, suffix: parsed.data };
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw suffixError(`"${clip(text)}" in the model suffix is not valid URL encoding`);
  }
}

export interface ResolvedChatModel {
  readonly model: CatalogModel;
  /** The character of `service_parameters.character_slug`, when one was asked for. */
  readonly character: Character | undefined;
}

/**
 * Resolves the model (and the character, if any) of a chat request. A character's model replaces a trait (a
 * trait asks for "whatever is recommended", and the character recommends its model); an explicit model id or
 * compatibility name is kept. Unknown or non-text names are 400 INVALID_MODEL; a model the key's privacy
 * setting forbids is 403; an offline model is 503.
 */
export async function resolveChatModel(
  deps: { catalog: CatalogService; characters: CharacterService },
  auth: AccountAuthContext,
  name: string,
  characterSlug: string | undefined,
): Promise<ResolvedChatModel> {
  const [lookup, character] = await Promise.all([
    deps.catalog.lookupModel(name, 'text'),
    characterSlug === undefined ? undefined : deps.characters.getBySlug(auth, characterSlug),
  ]);
  if (lookup.model === undefined) {
    if (lookup.otherType)
      throw new InvalidModelError(
        `Model ${clip(name)} is a ${lookup.otherType} model; chat completions need a text model`,
      );
    throw new InvalidModelError(
      `Unknown model ${clip(name)}: use a text model id, a trait or a compatibility name from GET /api/v1/models`,
    );
  }
  let model = lookup.model;
  if (character && lookup.via === 'trait') {
    const characterModel = await deps.catalog.lookupModel(character.modelId, 'text');
    if (characterModel.model) model = characterModel.model;
  }
  const privacy = modelPrivacyOf(auth);
  if (privacy !== 'ALL' && model.privacy !== 'private') {
    throw new ForbiddenError(`This API key may only use private models; ${model.id} is ${model.privacy}`);
  }
  if (model.offline) throw new UpstreamError(`Model ${model.id} is offline`, 'MODEL_OFFLINE');
  return { model, character };
}
