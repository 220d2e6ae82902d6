import { clip, ForbiddenError, InvalidModelError, UpstreamError } from '../errors.ts';
import type { CatalogService } from './catalog.service.ts';
import type { CatalogModel, ModelType } from './model.ts';

/**
 * The model a request names for one model type (an id, a trait or a compatibility name; none: the type's
 * `default`), as the embedding and transcription services resolve it: unknown or of another type → 400
 * INVALID_MODEL naming where to look; a public model under a PRIVATE_ONLY key → 403; an offline model → 503.
 */
export async function resolveTypedModel(
  catalog: CatalogService,
  request: { readonly name: string | undefined; readonly type: ModelType; readonly purpose: string },
  keyPrivacy: string,
): Promise<CatalogModel> {
  const { name, type, purpose } = request;
  const article = /^[aeiou]/.test(type) ? 'an' : 'a';
  const lookup = await catalog.lookupModel(name ?? 'default', type);
  const model = lookup.model;
  if (!model) {
    if (name === undefined) throw new UpstreamError(`No ${type} model is configured`, 'SERVICE_UNAVAILABLE');
    if (lookup.otherType)
      throw new InvalidModelError(
        `Model ${clip(name)} is a ${lookup.otherType} model; ${purpose} needs ${article} ${type} model`,
      );
    throw new InvalidModelError(
      `Unknown model ${clip(name)}: use ${article} ${type} model id, trait or compatibility name from GET /api/v1/models?type=${type}`,
    );
  }
  if (keyPrivacy === 'PRIVATE_ONLY' && model.privacy !== 'private')
    throw new ForbiddenError(`This API key may only use private models; ${model.id} is ${model.privacy}`);
  if (model.offline) throw new UpstreamError(`Model ${model.id} is offline`, 'MODEL_OFFLINE');
  return model;
}
