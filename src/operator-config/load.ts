import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type { parse as parseYamlType } from 'yaml';
import type { z } from 'zod';
import { DEFAULT_OWNED_BY, type ModelType } from '../catalog/model-types.ts';
import { defaultOperatorConfig } from './default-config.ts';
import { formatPath, type OperatorConfigIssue } from './issue.ts';
import { resolveModelAliases } from './model-aliases.ts';
import { providerBindings } from './provider-bindings.ts';
import { checkRpcConfig } from './rpc-config.ts';
import { checkSearchConfig } from './search-mapping.ts';
import {
  OperatorConfigFileSchema,
  type CharacterConfig,
  type ModelConfig,
  type OperatorConfig,
  type OperatorConfigFile,
  type ProviderConfig,
  type ProviderType,
} from './schema.ts';

const require = createRequire(import.meta.url);

export type { CharacterConfig, ModelConfig, OperatorConfig, ProviderConfig } from './schema.ts';

export { formatPath, type OperatorConfigIssue } from './issue.ts';

/** The operator config file is unreadable or invalid; the message names the file and every bad path. */
export class OperatorConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly OperatorConfigIssue[],
  ) {
    const lines = issues.map((issue) => `  ${issue.path ? `${issue.path}: ` : ''}${issue.message}`);
    super(`Invalid operator config ${source}:\n${lines.join('\n')}`);
    this.name = 'OperatorConfigError';
  }
}

const EXTENSIONS = ['.yaml', '.yml', '.json'];
const BUILT_IN = 'built-in defaults';
/** Search and JSON-RPC upstreams serve augment and the crypto proxy, never catalog models. */
const NON_MODEL_PROVIDERS: readonly ProviderType[] = ['searxng', 'brave', 'json-rpc'];

/** Reads the operator file (YAML or JSON, by extension) and merges it over the built-in defaults; no path: defaults only. */
export async function loadOperatorConfig(path?: string): Promise<OperatorConfig> {
  if (path === undefined) return parseOperatorConfig({}, BUILT_IN);
  if (!EXTENSIONS.includes(extname(path).toLowerCase())) {
    throw new OperatorConfigError(path, [
      { path: '', message: `unsupported file extension; use ${EXTENSIONS.join(', ')}` },
    ]);
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new OperatorConfigError(path, [{ path: '', message: `cannot read the file (${(error as Error).message})` }]);
  }
  let raw: unknown;
  try {
    // YAML 1.2 is a superset of JSON, so one parser reads both (and reports line and column).
    // Loaded here: a start without an operator config file does without the parser's loading cost.
    const { parse: parseYaml } = require('yaml') as { parse: typeof parseYamlType };
    raw = parseYaml(text);
  } catch (error) {
    throw new OperatorConfigError(path, [{ path: '', message: (error as Error).message }]);
  }
  return parseOperatorConfig(raw, path);
}

/** Validates a parsed operator file, merges it over the built-in defaults and cross-checks the result. */
export function parseOperatorConfig(raw: unknown, source: string): OperatorConfig {
  const defaults = OperatorConfigFileSchema.safeParse(defaultOperatorConfig);
  if (!defaults.success) throw new OperatorConfigError(BUILT_IN, zodIssues(defaults.error));
  const file = OperatorConfigFileSchema.safeParse(raw ?? {});
  if (!file.success) throw new OperatorConfigError(source, zodIssues(file.error));

  const issues: OperatorConfigIssue[] = [...duplicateKeys(file.data)];
  const merged = merge(defaults.data, file.data, issues);
  crossCheck(merged, issues);
  checkSearchConfig(merged.providers, file.data.search, issues);
  checkRpcConfig(merged.providers, file.data.rpc, issues);
  if (issues.length > 0) throw new OperatorConfigError(source, issues);
  const providers = new Map(merged.providers.map((entry) => [entry.value.id, entry.value]));
  return {
    providers: merged.providers.map((entry) => entry.value),
    models: merged.models.map(({ value: model }) => withOwner(model, providers)),
    compatibilityMappings: Object.fromEntries(
      Object.entries(merged.mappings).map(([type, names]) => [
        type,
        Object.fromEntries(names.map((m) => [m.name, m.modelId])),
      ]),
    ),
    characters: merged.characters.map((entry) => entry.value),
    search: file.data.search ?? {},
    ...(file.data.rpc ? { rpc: file.data.rpc } : {}),
    ...(file.data.discovery ? { discovery: file.data.discovery } : {}),
    ...(file.data.chat ? { chat: file.data.chat } : {}),
    ...(file.data.rateLimits ? { rateLimits: file.data.rateLimits } : {}),
  };
}

/** A model's `owned_by`: its own, else its primary provider's, else the default. */
function withOwner(model: ModelConfig, providers: ReadonlyMap<string, ProviderConfig>): ModelConfig {
  const [primary] = providerBindings(model);
  const ownedBy = model.ownedBy ?? (primary && providers.get(primary.providerId)?.ownedBy) ?? DEFAULT_OWNED_BY;
  return { ...model, ownedBy };
}

function zodIssues(error: z.ZodError): OperatorConfigIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path) || '(root)', message: issue.message }));
}

interface Tracked<T> {
  value: T;
  /** The path an issue about this entry names. */
  origin: string;
  builtIn: boolean;
}
interface Mapping {
  name: string;
  modelId: string;
  origin: string;
  builtIn: boolean;
}
interface Merged {
  providers: Tracked<ProviderConfig>[];
  models: Tracked<ModelConfig>[];
  mappings: Partial<Record<ModelType, Mapping[]>>;
  characters: Tracked<CharacterConfig>[];
}

function duplicateKeys(file: OperatorConfigFile): OperatorConfigIssue[] {
  const issues: OperatorConfigIssue[] = [];
  const check = (section: string, key: string, keys: string[]) => {
    const first = new Map<string, number>();
    keys.forEach((value, index) => {
      const earlier = first.get(value);
      if (earlier === undefined) first.set(value, index);
      else
        issues.push({
          path: `${section}[${index}].${key}`,
          message: `duplicate ${key} "${value}" (also ${section}[${earlier}])`,
        });
    });
  };
  check(
    'providers',
    'id',
    file.providers.map((p) => p.id),
  );
  check(
    'models',
    'id',
    file.models.map((m) => m.id),
  );
  check(
    'characters',
    'slug',
    file.characters.map((c) => c.slug),
  );
  return issues;
}

/**
 * Arrays merge by id (slug for characters): an operator entry replaces the built-in one in place, new entries
 * follow in file order, `disabled: true` removes. `replaceDefaults` keeps only the built-in providers. Model
 * aliases then become models of their own (model-aliases.ts).
 */
function merge(defaults: OperatorConfigFile, file: OperatorConfigFile, issues: OperatorConfigIssue[]): Merged {
  const keep = !file.replaceDefaults;
  const mappings: Merged['mappings'] = {};
  const addMappings = (source: OperatorConfigFile['compatibilityMappings'], builtIn: boolean) => {
    for (const [type, names] of Object.entries(source) as [ModelType, Record<string, string | null>][]) {
      const list = (mappings[type] ??= []);
      for (const [name, modelId] of Object.entries(names)) {
        const index = list.findIndex((mapping) => mapping.name === name);
        if (index >= 0) list.splice(index, 1);
        const origin = `${formatPath(['compatibilityMappings', type, name])}${builtIn ? ` (${BUILT_IN})` : ''}`;
        if (modelId !== null) list.push({ name, modelId, origin, builtIn });
      }
    }
  };
  if (keep) addMappings(defaults.compatibilityMappings, true);
  addMappings(file.compatibilityMappings, false);
  return {
    providers: mergeEntries('providers', 'id', defaults.providers, true, file.providers, issues),
    models: resolveModelAliases(mergeEntries('models', 'id', defaults.models, keep, file.models, issues), issues),
    mappings,
    characters: mergeEntries('characters', 'slug', defaults.characters, keep, file.characters, issues),
  };
}

function mergeEntries<T extends { disabled?: boolean | undefined }, K extends keyof T & string>(
  section: string,
  key: K,
  builtIns: readonly T[],
  keepBuiltIns: boolean,
  entries: readonly T[],
  issues: OperatorConfigIssue[],
): Tracked<Exclude<T, { disabled: true }>>[] {
  type Entry = Exclude<T, { disabled: true }>;
  const out = new Map<T[K], Tracked<Entry>>();
  for (const entry of keepBuiltIns ? builtIns : []) {
    out.set(entry[key], {
      value: entry as Entry,
      origin: `${section}[${key}=${String(entry[key])}] (${BUILT_IN})`,
      builtIn: true,
    });
  }
  const builtInKeys = new Set(builtIns.map((entry) => entry[key]));
  entries.forEach((entry, index) => {
    const id = entry[key];
    if (entry.disabled !== true) out.set(id, { value: entry as Entry, origin: `${section}[${index}]`, builtIn: false });
    else if (!out.delete(id) && !builtInKeys.has(id)) {
      issues.push({
        path: `${section}[${index}].${key}`,
        message: `nothing to disable: no built-in ${section.slice(0, -1)} "${String(id)}"`,
      });
    }
  });
  return [...out.values()];
}

/**
 * Provider references, traits, mapping targets and character models. A built-in entry that only conflicts
 * with the operator's choices gives way (loses the trait, or is dropped); operator entries get an issue.
 */
function crossCheck(merged: Merged, issues: OperatorConfigIssue[]): void {
  const providers = new Map(merged.providers.map((entry) => [entry.value.id, entry.value]));
  for (const { value: model, origin } of merged.models) {
    const seen = new Set<string>();
    providerBindings(model).forEach(({ providerId }, index) => {
      const path = model.providers ? `${origin}.providers[${index}]` : `${origin}.provider`;
      const provider = providers.get(providerId);
      if (!provider)
        issues.push({
          path,
          message: `unknown provider "${providerId}" (configured: ${[...providers.keys()].join(', ') || 'none'})`,
        });
      else if (NON_MODEL_PROVIDERS.includes(provider.type))
        issues.push({ path, message: `a ${provider.type} provider cannot serve ${model.type} models` });
      if (seen.has(providerId)) issues.push({ path, message: `provider "${providerId}" is listed twice` });
      seen.add(providerId);
    });
  }

  const owners = new Map<string, Tracked<ModelConfig>>();
  for (const entry of [...merged.models].sort((a, b) => Number(a.builtIn) - Number(b.builtIn))) {
    for (const trait of entry.value.traits) {
      const owner = owners.get(`${entry.value.type}/${trait}`);
      if (!owner) owners.set(`${entry.value.type}/${trait}`, entry);
      else if (entry.builtIn) entry.value = { ...entry.value, traits: entry.value.traits.filter((t) => t !== trait) };
      else
        issues.push({
          path: `${entry.origin}.traits`,
          message: `trait "${trait}" already names ${entry.value.type} model "${owner.value.id}"; a trait names one model per type`,
        });
    }
  }

  const models = new Map(merged.models.map((entry) => [entry.value.id, entry.value]));
  const problemWith = (modelId: string, type: ModelType): string | undefined => {
    const model = models.get(modelId);
    if (!model) return `unknown or disabled model "${modelId}"`;
    return model.type === type ? undefined : `model "${modelId}" has type ${model.type}, expected ${type}`;
  };
  for (const [type, list] of Object.entries(merged.mappings) as [ModelType, Mapping[]][]) {
    merged.mappings[type] = list.filter((mapping) => {
      const problem = problemWith(mapping.modelId, type);
      if (problem && !mapping.builtIn) issues.push({ path: mapping.origin, message: problem });
      return problem === undefined;
    });
  }
  merged.characters = merged.characters.filter((entry) => {
    const problem = problemWith(entry.value.modelId, 'text');
    if (problem && !entry.builtIn) issues.push({ path: `${entry.origin}.modelId`, message: problem });
    return problem === undefined;
  });
}
