import { isIP } from 'node:net';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { SignInDomainSource } from './wallets/sign-in-site.ts';

/*
 * The settings a server others reach must set, reported once at start in one warning that names each environment
 * variable (docs/operations.md, "Start-up and the settings a public deployment sets"). Only for a server that looks
 * public: listening beyond loopback, or NODE_ENV=production set explicitly (a server behind a reverse proxy on the
 * same machine listens on loopback). A developer's default start (127.0.0.1, no NODE_ENV) hears nothing.
 */

export interface PublicSetting {
  /** The environment variable(s) to set. */
  readonly env: string;
  /** What goes wrong without it, briefly. */
  readonly why: string;
}

export interface PublicSettingsInput {
  readonly host: string;
  readonly corsOrigins: readonly string[];
  /** Where the wallet sign-in domains come from (src/wallets/sign-in-site.ts). */
  readonly signInSource: SignInDomainSource;
  /** NODE_ENV=production set in the environment (the config's default does not count). */
  readonly productionSet: boolean;
}

/** Whether a listen host reaches beyond this machine (a wildcard, or any address or name that is not loopback). */
export function isPublicHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return false;
  if (isIP(bare) === 4) return !bare.startsWith('127.');
  return true;
}

/** The settings this server lacks for a public deployment; empty when it does not look public or has them all. */
export function missingPublicSettings(input: PublicSettingsInput): PublicSetting[] {
  if (!isPublicHost(input.host) && !input.productionSet) return [];
  const missing: PublicSetting[] = [];
  if (input.signInSource === 'listen address') {
    missing.push({
      env: 'LAGOON_PUBLIC_URL (or LAGOON_SIWE_DOMAINS)',
      why: 'wallet sign-ins are accepted for the listen address, and media URLs follow the request’s Host',
    });
  }
  if (input.corsOrigins.includes('*')) {
    missing.push({ env: 'CORS_ORIGINS', why: 'is *: every web page may call the API; list the browser apps’ origins' });
  }
  return missing;
}

/** Logs the one warning, if anything is missing. */
export function warnOfPublicSettings(
  config: Pick<Config, 'http' | 'productionSet'>,
  signInSite: { readonly source: SignInDomainSource },
  logger: Logger,
): void {
  const missing = missingPublicSettings({
    host: config.http.host,
    corsOrigins: config.http.corsOrigins,
    signInSource: signInSite.source,
    productionSet: config.productionSet,
  });
  if (missing.length === 0) return;
  logger.warn(
    { missingSettings: missing.map((setting) => setting.env) },
    `a public deployment should set: ${missing.map((setting) => `${setting.env} (${setting.why})`).join('; ')} — see docs/operations.md, "Start-up and the settings a public deployment sets"`,
  );
}
