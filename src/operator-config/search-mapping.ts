import { SearxngOptions } from '../providers/search/searxng.engine.ts';
import type { OperatorConfigIssue } from './issue.ts';
import type { ProviderConfig, SearchMapping } from './schema.ts';

const SEARCH_TYPES: readonly ProviderConfig['type'][] = ['searxng', 'brave'];

/**
 * Cross-checks the web search part of the operator config: `search` names existing `searxng`/`brave`
 * providers (once each), a `brave` provider has its API key, and a `searxng` provider's options are valid.
 */
export function checkSearchConfig(
  providers: readonly { value: ProviderConfig; origin: string }[],
  mapping: SearchMapping | undefined,
  issues: OperatorConfigIssue[],
): void {
  const byId = new Map(providers.map((entry) => [entry.value.id, entry.value]));
  const searchIds = providers.filter((entry) => SEARCH_TYPES.includes(entry.value.type)).map((entry) => entry.value.id);
  for (const [identifier, ids] of Object.entries(mapping ?? {})) {
    const seen = new Set<string>();
    ids?.forEach((id, index) => {
      const path = `search.${identifier}${ids.length > 1 ? `[${index}]` : ''}`;
      const provider = byId.get(id);
      if (!provider)
        issues.push({
          path,
          message: `unknown provider "${id}" (search providers: ${searchIds.join(', ') || 'none'})`,
        });
      else if (!SEARCH_TYPES.includes(provider.type))
        issues.push({
          path,
          message: `provider "${id}" has type ${provider.type}; web search needs a searxng or brave provider`,
        });
      if (seen.has(id)) issues.push({ path, message: `provider "${id}" is listed twice` });
      seen.add(id);
    });
  }
  for (const { value: provider, origin } of providers) {
    if (provider.type === 'brave' && provider.apiKey === undefined) {
      issues.push({
        path: `${origin}.apiKey`,
        message: 'a brave provider needs apiKey (the Brave Search API subscription token)',
      });
    }
    if (provider.type === 'searxng') {
      const options = SearxngOptions.safeParse(provider.options ?? {});
      if (!options.success) {
        for (const issue of options.error.issues)
          issues.push({ path: [`${origin}.options`, ...issue.path.map(String)].join('.'), message: issue.message });
      }
    }
  }
}
