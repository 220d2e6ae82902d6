import { hostname, networkInterfaces } from 'node:os';

/** The site a sign-in challenge names: its domain (host[:port]) and URI. */
export interface SignInOrigin {
  /** host[:port], as EIP-4361 messages name it. */
  readonly host: string;
  /** `https://host` (or the configured public URL's origin). */
  readonly origin: string;
}

/** Which setting the accepted sign-in domains come from. */
export type SignInDomainSource = 'LAGOON_SIWE_DOMAINS' | 'LAGOON_PUBLIC_URL' | 'listen address';

export interface SignInSiteSettings {
  /** LAGOON_SIWE_DOMAINS, lower-case (empty: unset). */
  readonly siweDomains: readonly string[];
  /** LAGOON_PUBLIC_URL (unset: undefined). */
  readonly publicUrl: string | undefined;
  /** HOST and PORT; the port is replaced by the bound one once the server listens ({@link SignInSite.listening}). */
  readonly listen: { readonly host: string; readonly port: number };
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

/**
 * The site wallet sign-ins are for: the EIP-4361 domains a message may name, and the domain and URI a challenge
 * hands out. Both come from configuration only (LAGOON_SIWE_DOMAINS, else LAGOON_PUBLIC_URL's host, else the listen
 * address), never from the request: its Host header is the caller's choice, so a message a phishing site had a
 * victim sign for the phishing site's own domain would otherwise be accepted by sending that domain as Host.
 */
export class SignInSite {
  readonly source: SignInDomainSource;
  private accepted: readonly string[];
  private challengeSite: SignInOrigin;

  constructor(private readonly settings: SignInSiteSettings) {
    const { siweDomains, publicUrl } = settings;
    this.source = siweDomains.length > 0 ? 'LAGOON_SIWE_DOMAINS' : publicUrl ? 'LAGOON_PUBLIC_URL' : 'listen address';
    const publicSite = publicUrl ? siteOf(new URL(publicUrl)) : undefined;
    if (siweDomains.length > 0) {
      this.accepted = siweDomains;
      const first = siweDomains[0] ?? '';
      this.challengeSite =
        publicSite && siweDomains.includes(publicSite.host)
          ? publicSite
          : { host: first, origin: `${isLoopback(first) ? 'http' : 'https'}://${first}` };
    } else if (publicSite) {
      this.accepted = [publicSite.host];
      this.challengeSite = publicSite;
    } else {
      [this.accepted, this.challengeSite] = listenSite(settings.listen.host, settings.listen.port);
    }
  }

  /** The server's bound port (PORT=0 lets the system pick one): the listen-address default names it from now on. */
  listening(port: number): void {
    if (this.source === 'listen address')
      [this.accepted, this.challengeSite] = listenSite(this.settings.listen.host, port);
  }

  /** Every domain a sign-in message may name (lower-case host[:port]). */
  get domains(): readonly string[] {
    return this.accepted;
  }

  /** What a challenge names: the public URL's host and origin when accepted, else the first accepted domain. */
  get origin(): SignInOrigin {
    return this.challengeSite;
  }

  accepts(domain: string): boolean {
    return this.accepted.includes(domain.toLowerCase());
  }
}

/** A listener's domains, and the first of them (plain http: Lagoon itself serves no TLS) for challenges. */
function listenSite(host: string, port: number): [readonly string[], SignInOrigin] {
  const domains = listenDomains(host, port);
  const first = domains[0] ?? '';
  return [domains, { host: first, origin: `http://${first}` }];
}

function siteOf(url: URL): SignInOrigin {
  return { host: url.host.toLowerCase(), origin: url.origin };
}

/** `host:port` as URL writes it: lower-case, IPv6 in brackets, no `:80` (a browser's `location.host`). */
function authority(host: string, port: number): string | undefined {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  try {
    return new URL(`http://${bracketed}:${port}`).host;
  } catch {
    return undefined; // an interface address URL cannot hold (an IPv6 zone)
  }
}

/** 127.0.0.1, localhost or [::1], with or without a port. */
export function isLoopback(domain: string): boolean {
  return LOOPBACK_NAMES.includes(domain.replace(/:\d+$/, ''));
}

/**
 * The names clients reach a listener by: a loopback listener (127.0.0.1, localhost, ::1) by every loopback name; a
 * wildcard one (0.0.0.0, ::) by those, the machine's host name and its interface addresses; any other by its host.
 */
export function listenDomains(host: string, port: number): string[] {
  const hosts = WILDCARD_HOSTS.has(host.toLowerCase())
    ? [
        ...LOOPBACK_NAMES,
        hostname(),
        ...Object.values(networkInterfaces()).flatMap((addresses) => (addresses ?? []).map((a) => a.address)),
      ]
    : [host];
  const named = hosts.map((name) => authority(name, port)).filter((name): name is string => name !== undefined);
  // A loopback listener: the names a local client may use for it (authority's first, then the others).
  if (named.length === 1 && isLoopback(named[0] ?? ''))
    named.push(...LOOPBACK_NAMES.flatMap((name) => authority(name, port) ?? []));
  return [...new Set(named)];
}
