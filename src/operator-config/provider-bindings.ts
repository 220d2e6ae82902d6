import type { ProviderBinding } from '../catalog/model-types.ts';
import type { ModelConfig } from './schema.ts';

/** The providers serving a configured model, in fallback order (`provider` or `providers`; upstream name defaults to the id). */
export function providerBindings(
  model: Pick<ModelConfig, 'id' | 'provider' | 'providers' | 'upstreamModel'>,
): ProviderBinding[] {
  const upstreamModel = model.upstreamModel ?? model.id;
  const entries = model.providers ?? (model.provider === undefined ? [] : [model.provider]);
  return entries.map((entry) =>
    typeof entry === 'string'
      ? { providerId: entry, upstreamModel }
      : { providerId: entry.id, upstreamModel: entry.upstreamModel ?? upstreamModel },
  );
}
