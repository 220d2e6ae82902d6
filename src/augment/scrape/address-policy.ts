import ipaddr from 'ipaddr.js';

/*
 * Which network addresses the web scraper may connect to. A chat user chooses the URLs, so without this rule the
 * server would fetch from wherever it stands: its own loopback services, the cloud metadata endpoint
 * (169.254.169.254), the operator's private network. Only public unicast addresses pass, plus the networks the
 * operator lists on purpose (an intranet wiki, a test server on 127.0.0.1).
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Deprecated IPv6 site-local addresses, still routed privately in places; ipaddr.js counts them as unicast. */
const SITE_LOCAL = ipaddr.parseCIDR('fec0::/10');

export class AddressPolicy {
  private readonly allowed: readonly [Address, number][];

  /** `allowNetworks`: CIDRs (`10.1.0.0/16`, `fd00::/8`) or single addresses allowed although not public. */
  constructor(allowNetworks: readonly string[] = []) {
    this.allowed = allowNetworks.map(parseNetwork);
  }

  /** Whether a connection to this resolved address (any notation, IPv4-mapped IPv6 included) is allowed. */
  allows(address: string): boolean {
    if (!ipaddr.isValid(address)) return false;
    // ::ffff:127.0.0.1 is 127.0.0.1 on the wire: judge the IPv4 address.
    const parsed = ipaddr.process(address);
    if (this.allowed.some((network) => parsed.kind() === network[0].kind() && parsed.match(network))) return true;
    if (parsed.range() !== 'unicast') return false;
    return !(parsed.kind() === 'ipv6' && parsed.match(SITE_LOCAL));
  }
}

/** A CIDR or a single address (as a /32 or /128); throws with the offending text otherwise (config validation). */
export function parseNetwork(text: string): [Address, number] {
  if (ipaddr.isValidCIDR(text)) {
    const [address, bits] = ipaddr.parseCIDR(text);
    // An IPv4-mapped network (::ffff:10.0.0.0/104) is the IPv4 network, as addresses are judged.
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
    return [address, bits];
  }
  if (ipaddr.isValid(text)) {
    const address = ipaddr.process(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  }
  throw new Error(`not an IP address or CIDR network: ${text}`);
}

/** The address inside a URL hostname when it is an IP literal (`127.0.0.1`, `[::1]`), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? bare : undefined;
}
