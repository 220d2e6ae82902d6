import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { listenDomains, SignInSite } from '../../src/wallets/sign-in-site.ts';

/* The wallet sign-in site from configuration alone (src/wallets/sign-in-site.ts); HTTP: test/rest/wallets-sign-in-domains. */

function siteOf(env: Record<string, string>): SignInSite {
  const config = loadConfig(env);
  return new SignInSite({
    siweDomains: config.x402.siweDomains,
    publicUrl: config.media.publicUrl,
    listen: config.http,
  });
}

describe('wallet sign-in site', () => {
  it('defaults to the loopback listen address, under every loopback name, and follows the bound port', () => {
    const site = siteOf({});
    expect(site.source).toBe('listen address');
    expect(site.domains).toEqual(['127.0.0.1:8080', 'localhost:8080', '[::1]:8080']);
    expect(site.origin).toEqual({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' });
    site.listening(41234);
    expect(site.accepts('LOCALHOST:41234')).toBe(true);
    expect(site.accepts('127.0.0.1:8080')).toBe(false);
    expect(site.origin.origin).toBe('http://127.0.0.1:41234');
  });

  it('names another listen address by itself; port 80 as browsers write it', () => {
    expect(listenDomains('10.0.0.5', 9000)).toEqual(['10.0.0.5:9000']);
    expect(listenDomains('Lagoon.Internal', 80)).toEqual(['lagoon.internal']);
    expect(listenDomains('::1', 8080)).toEqual(['[::1]:8080', '127.0.0.1:8080', 'localhost:8080']);
  });

  it('names a wildcard listener by the loopback names, the host name and the interface addresses', () => {
    const domains = listenDomains('0.0.0.0', 8080);
    expect(domains).toEqual(expect.arrayContaining(['127.0.0.1:8080', 'localhost:8080', `${hostname()}:8080`]));
    expect(domains.every((domain) => domain.endsWith(':8080'))).toBe(true);
    expect(listenDomains('::', 8080)).toEqual(domains);
  });

  it('LAGOON_PUBLIC_URL: its host only, its origin in challenges; the bound port changes nothing', () => {
    const site = siteOf({ LAGOON_PUBLIC_URL: 'https://API.example.com:8443/lagoon/' });
    expect(site.source).toBe('LAGOON_PUBLIC_URL');
    site.listening(41234);
    expect(site.domains).toEqual(['api.example.com:8443']);
    expect(site.origin).toEqual({ host: 'api.example.com:8443', origin: 'https://api.example.com:8443' });
  });

  it('LAGOON_SIWE_DOMAINS wins; the challenge names the public URL if listed, else the first domain', () => {
    const listed = siteOf({ LAGOON_SIWE_DOMAINS: 'a.example, B.example', LAGOON_PUBLIC_URL: 'https://b.example' });
    expect(listed.source).toBe('LAGOON_SIWE_DOMAINS');
    expect(listed.domains).toEqual(['a.example', 'b.example']);
    expect(listed.origin).toEqual({ host: 'b.example', origin: 'https://b.example' });
    const other = siteOf({ LAGOON_SIWE_DOMAINS: 'a.example', LAGOON_PUBLIC_URL: 'https://c.example' });
    expect(other.origin).toEqual({ host: 'a.example', origin: 'https://a.example' });
    expect(siteOf({ LAGOON_SIWE_DOMAINS: 'localhost:3000' }).origin.origin).toBe('http://localhost:3000');
  });
});
