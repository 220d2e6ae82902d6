import { formatPath, type OperatorConfigIssue } from './issue.ts';
import { providerBindings } from './provider-bindings.ts';
import { isModelAlias, ModelConfigSchema, type ModelAliasConfig, type ModelConfig } from './schema.ts';

/*
 * Model aliases (`aliasOf` in the operator file): each becomes a model of its own under its own id, with its
 * final target's providers and upstream model names, the target's record with the alias's fields over it, and
 * only its own traits. Usage, answers and the catalog then carry the alias id, the name the caller asked for.
 */

interface Entry<T> {
  value: T;
  /** Where an issue about this entry points, e.g. `models[3]`. */
  origin: string;
}

/** Record fields merged key by key with the target's; every other field set on an alias replaces the target's. */
const MERGED_FIELDS = ['capabilities', 'constraints', 'spec'] as const;

/**
 * Replaces every alias by the model it describes. A missing or disabled target, a cycle, or a type other than
 * the target's is an issue (and the alias is dropped); an alias of an alias inherits the intermediate one's record
 * and runs on the final target's engine.
 */
export function resolveModelAliases<E extends Entry<ModelConfig | ModelAliasConfig>>(
  entries: readonly E[],
  issues: OperatorConfigIssue[],
): (E & { value: ModelConfig })[] {
  const byId = new Map(entries.map((entry) => [entry.value.id, entry]));
  const resolved = new Map<string, ModelConfig | null>();

  const resolve = (entry: E, chain: readonly string[]): ModelConfig | undefined => {
    const alias = entry.value;
    if (!isModelAlias(alias)) return alias;
    const known = resolved.get(alias.id);
    if (known !== undefined) return known ?? undefined;
    const fail = (field: string, message: string): undefined => {
      issues.push({ path: `${entry.origin}.${field}`, message });
      resolved.set(alias.id, null);
      return undefined;
    };
    if (chain.includes(alias.id))
      return fail('aliasOf', `alias cycle: ${[...chain.slice(chain.indexOf(alias.id)), alias.id].join(' → ')}`);
    const targetEntry = byId.get(alias.aliasOf);
    if (!targetEntry) return fail('aliasOf', `unknown or disabled model "${alias.aliasOf}"`);
    const target = resolve(targetEntry, [...chain, alias.id]);
    if (!target) {
      resolved.set(alias.id, null);
      return undefined;
    }
    if (alias.type !== undefined && alias.type !== target.type)
      return fail(
        'type',
        `alias "${alias.id}" is ${alias.type} but its target "${alias.aliasOf}" is a ${target.type} model`,
      );
    const parsed = ModelConfigSchema.safeParse(aliasInput(alias, target));
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        issues.push({ path: subPath(entry.origin, issue.path), message: issue.message });
      resolved.set(alias.id, null);
      return undefined;
    }
    resolved.set(alias.id, parsed.data);
    return parsed.data;
  };

  return entries.flatMap((entry) => {
    const value = resolve(entry, []);
    return value ? [{ ...entry, value }] : [];
  });
}

/** `models[3]` + `pricing.input` → `models[3].pricing.input`. */
function subPath(origin: string, path: readonly PropertyKey[]): string {
  const rest = formatPath(path);
  if (rest === '') return origin;
  return rest.startsWith('[') ? `${origin}${rest}` : `${origin}.${rest}`;
}

/** The alias as a full model entry: the target's fields, the alias's over them, the target's providers. */
function aliasInput(alias: ModelAliasConfig, target: ModelConfig): Record<string, unknown> {
  const { provider: _provider, providers: _providers, upstreamModel: _upstream, traits: _traits, ...record } = target;
  const { aliasOf: _aliasOf, type: _type, disabled: _disabled, traits, ...overrides } = alias;
  const inherited: Record<string, unknown> = {
    ...record,
    ...(record.created && { created: record.created.toISOString() }),
  };
  const merged: Record<string, unknown> = { ...inherited, ...overrides };
  for (const field of MERGED_FIELDS) {
    const own = overrides[field];
    const base = inherited[field];
    if (own !== undefined && typeof base === 'object' && base !== null) merged[field] = { ...base, ...own };
  }
  return {
    ...merged,
    traits: traits ?? [],
    providers: providerBindings(target).map(({ providerId, upstreamModel }) => ({ id: providerId, upstreamModel })),
  };
}
