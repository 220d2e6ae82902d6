import type { ProviderConfig } from './schema.ts';

/*
 * The env shortcuts that declare a provider without a config file (OPENAI_COMPATIBLE_BASE_URL, SEARXNG_URL,
 * BRAVE_SEARCH_API_KEY), turned into provider entries once, when the configuration loads (src/app.ts): every
 * gateway then reads one provider list. The RPC_UPSTREAM_<SLUG> shortcuts name networks, not providers: they stay
 * with the networks (src/crypto-rpc/networks.ts).
 */

/** The provider id of the `OPENAI_COMPATIBLE_BASE_URL` shortcut (models found by discovery are bound to it). */
export const ENV_CHAT_PROVIDER_ID = 'openai-compatible';

/** The env shortcuts, as src/config.ts reads them. */
export interface EnvShortcuts {
  readonly chatUpstream?: { readonly baseUrl: string | undefined; readonly apiKey: string | undefined } | undefined;
  readonly search?:
    | {
        readonly searxngUrl: string | undefined;
        readonly braveApiKey: string | undefined;
        readonly braveUrl: string | undefined;
      }
    | undefined;
}

/** The providers the env shortcuts declare (their settings are the provider types' defaults). */
export function envShortcutProviders(env: EnvShortcuts): ProviderConfig[] {
  const providers: ProviderConfig[] = [];
  const chat = env.chatUpstream;
  if (chat?.baseUrl)
    providers.push({ id: ENV_CHAT_PROVIDER_ID, type: 'openai-compatible', baseUrl: chat.baseUrl, apiKey: chat.apiKey });
  const search = env.search;
  if (search?.braveApiKey)
    providers.push({ id: 'env:brave', type: 'brave', apiKey: search.braveApiKey, baseUrl: search.braveUrl });
  if (search?.searxngUrl) providers.push({ id: 'env:searxng', type: 'searxng', baseUrl: search.searxngUrl });
  return providers;
}

/**
 * The operator config with the env shortcuts' providers after its own. A file provider with the same id wins
 * (`warn` says which shortcut is ignored).
 */
export function withEnvProviders<C extends { readonly providers: readonly ProviderConfig[] }>(
  config: C,
  env: EnvShortcuts,
  warn: (message: string) => void = () => undefined,
): C {
  const declared = new Set(config.providers.map((provider) => provider.id));
  const added = envShortcutProviders(env).filter((provider) => {
    if (!declared.has(provider.id)) return true;
    warn(`The env shortcut of provider "${provider.id}" is ignored: the operator config already declares it`);
    return false;
  });
  return added.length === 0 ? config : { ...config, providers: [...config.providers, ...added] };
}
