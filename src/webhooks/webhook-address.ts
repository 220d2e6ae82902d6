import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { literalAddress, type AddressPolicy } from '../augment/scrape/address-policy.ts';
import { ValidationError } from '../errors.ts';

/*
 * Where webhooks may be sent: the scraper's address policy (src/augment/scrape/address-policy.ts), public addresses
 * only unless the operator lists networks in `chat.webScraping.allowNetworks`. Judged when an endpoint (or a job's
 * webhook_url) is registered, and again inside each delivery's socket lookup (webhook-delivery.ts), so a name that
 * resolves elsewhere since (DNS rebinding) is refused at the address actually connected to.
 */

export class RefusedAddressError extends Error {}

/** Registration: the URL's host must resolve, and every address it resolves to must be allowed. */
export async function checkWebhookUrl(policy: AddressPolicy, url: string, field: string): Promise<void> {
  const refuse = (message: string) => new ValidationError(`${field}: ${message}`, [{ path: [field], message }]);
  const { hostname } = new URL(url);
  const literal = literalAddress(hostname);
  if (literal !== undefined) {
    if (!policy.allows(literal)) throw refuse(`${literal} is not a public address`);
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(hostname, { all: true });
  } catch {
    throw refuse(`${hostname} does not resolve`);
  }
  const refused = addresses.find((entry) => !policy.allows(entry.address));
  if (refused) throw refuse(`${hostname} resolves to ${refused.address}, which is not a public address`);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup for a delivery's socket, refusing the whole answer when any address in it is not allowed. */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((entry) => !policy.allows(entry.address));
      if (refused)
        return callback(
          new RefusedAddressError(`${hostname} resolves to ${refused.address}, not a public address`),
          [],
        );
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
