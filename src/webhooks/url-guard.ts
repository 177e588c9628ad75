// Where orderpay may send a webhook (docs/webhooks.md "Safety"): whoever may register an endpoint
// must not be able to make the server call into its own network (SSRF). The URL is checked when
// the endpoint is registered, and every delivery checks the addresses its host resolves to at the
// moment of connecting (a name that resolved to a public address at registration may not resolve
// to a private one later: DNS rebinding). Redirects are never followed (src/webhooks/sender.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../core/errors.ts';
import { addressRange } from './address-range.ts';

export interface UrlGuardOptions {
  /** http and loopback/private addresses too (ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: development, tests). */
  allowPrivate: boolean;
}

/** Why an address may not be called, or undefined when it is a public unicast address. */
export function refusedAddressReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  // Everything but public unicast: loopback, private, link-local (169.254.169.254, the cloud
  // metadata service), CGNAT, multicast, unspecified, unique-local (fd00:ec2::254), reserved, and
  // the IPv6 forms that carry an IPv4 address, judged as it or refused (./address-range.ts).
  const range = addressRange(address);
  return range === 'unicast' ? undefined : `${address} is a ${range} address`;
}

/** Step: the URL as a webhook endpoint may have it, or a 400 problem saying why not. */
export function parseWebhookUrl(text: string, options: UrlGuardOptions): URL {
  const refuse = (detail: string) => new DomainError('WEBHOOK_URL_REFUSED', detail, { errors: [{ pointer: '/url', detail }] });
  if (!URL.canParse(text)) throw refuse('The url is not an absolute URL.');
  const url = new URL(text);
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw refuse(`The url must be ${options.allowPrivate ? 'http or https' : 'https'}.`);
  if (url.username || url.password) throw refuse('The url may not carry credentials; authenticate deliveries by their signature.');
  if (url.hash) throw refuse('The url may not have a fragment.');
  return url;
}

/** The host of a URL as the resolver takes it: an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Step: every address the URL's host resolves to is one orderpay may call, or a 400 problem. */
export async function assertPublicHost(url: URL, options: UrlGuardOptions): Promise<void> {
  if (options.allowPrivate) return;
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookupAll(hostOf(url), { all: true });
  } catch {
    throw new DomainError('WEBHOOK_URL_REFUSED', `The url's host ${url.hostname} does not resolve.`, {
      errors: [{ pointer: '/url', detail: 'the host does not resolve' }],
    });
  }
  for (const { address } of addresses) {
    const reason = refusedAddressReason(address);
    if (reason) {
      throw new DomainError(
        'WEBHOOK_URL_REFUSED',
        `The url's host ${url.hostname} is refused: ${reason}; webhooks go to public addresses only.`,
        {
          errors: [{ pointer: '/url', detail: reason }],
        },
      );
    }
  }
}

/** A connection to a refused address, found at the moment of connecting. */
export class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

/**
 * The `lookup` of a delivery's connection: resolves as Node would, then refuses to connect when any
 * address the host has is not public. The connection uses exactly the addresses checked here, so a
 * second resolution cannot swap in another.
 */
export function guardedLookup(options: UrlGuardOptions): LookupFunction {
  return function lookupPublicAddress(hostname, lookupOptions, callback) {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const refused = options.allowPrivate ? undefined : list.map((a) => refusedAddressReason(a.address)).find(Boolean);
      if (refused) return callback(new RefusedAddressError(`refused to connect: ${refused}`), '', 0);
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const [first] = list;
      return callback(null, first!.address, first!.family);
    });
  };
}
