// The range an IP address is in, as the URL guard judges it (docs/webhooks.md "Safety"): ipaddr.js's
// ranges, except for the IPv6 forms that carry an IPv4 address: IPv4-mapped and NAT64's Well-Known
// Prefix are judged as the IPv4 address they reach, an ISATAP identifier is refused when the address
// it names is not public, and every other form is refused whatever it carries
// (docs/decisions/0116-webhook-delivery-bounded-and-embedded-ipv4.md).
import ipaddr from 'ipaddr.js';

/** A range, and the forms that carry an IPv4 address at a known place, judged as that address. */
const JUDGED_AS_IPV4: readonly [string, ipaddr.IPv6, number][] = [
  // RFC 4291 §2.5.5.2: the system connects to the IPv4 address itself.
  ['ipv4Mapped', ipaddr.IPv6.parse('::ffff:0:0'), 96],
  // RFC 6052 §2.1, §2.2: NAT64's Well-Known Prefix, the IPv4 address in the last 32 bits; what DNS64
  // answers for an IPv4-only host in an IPv6-only network. A translator reaches exactly that address.
  ['nat64', ipaddr.IPv6.parse('64:ff9b::'), 96],
];

/** Forms refused whatever IPv4 address they carry; ipaddr.js names the others itself. */
const REFUSED_FORMS: readonly [string, ipaddr.IPv6, number][] = [
  // RFC 4291 §2.5.5.1: IPv4-compatible, deprecated; a stack with automatic tunnelling (sit) sends
  // it to the IPv4 address. ipaddr.js calls ::7f00:1 unicast. (:: and ::1 keep their own names.)
  ['ipv4Compatible', ipaddr.IPv6.parse('::'), 96],
  // RFC 7915 §4.1 (RFC 6145): IPv4-translated, the stateless translator's own form, no destination.
  ['ipv4Translated', ipaddr.IPv6.parse('::ffff:0:0:0'), 96],
  // RFC 8215: NAT64's local-use prefix; the operator picks the prefix length (/48 to /96), so where
  // the IPv4 address sits is unknown, and it serves local networks only.
  ['nat64LocalUse', ipaddr.IPv6.parse('64:ff9b:1::'), 48],
];

/**
 * RFC 5214 §6.1: an ISATAP interface identifier (0000:5efe or 0200:5efe, then an IPv4 address) under
 * any prefix: the ISATAP router of that prefix forwards to the IPv4 address inside its own network,
 * ours too when the prefix is ours.
 */
const ISATAP_IDENTIFIERS = new Set([0x0000_5efe, 0x0200_5efe]);

/** The last 32 bits of an IPv6 address, as the IPv4 address they spell. */
function lastIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  return new ipaddr.IPv4(address.toByteArray().slice(12));
}

/**
 * The address, read as the system reads it. ipaddr.js reads `::a.b.c.d` as IPv4-mapped
 * (::ffff:a.b.c.d), but RFC 4291 §2.2 and inet_pton read it as IPv4-compatible (::a.b.c.d), and the
 * resolver writes ::7f00:1 that way (libuv's inet_ntop): a DNS answer of ::808:808 arrives as ::8.8.8.8.
 */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const compatible = /^::([^:%]+)(%.*)?$/.exec(text)?.[1];
  if (compatible !== undefined && ipaddr.IPv4.isValid(compatible)) {
    const [a, b, c, d] = ipaddr.IPv4.parse(compatible).octets as [number, number, number, number];
    return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, (a << 8) | b, (c << 8) | d]);
  }
  return ipaddr.parse(text);
}

/** The range of a valid address (ipaddr.isValid): 'unicast' for a public unicast address. */
export function addressRange(text: string): string {
  const address = parseAddress(text);
  if (address.kind() === 'ipv4') return address.range();
  const v6 = address as ipaddr.IPv6;
  if (JUDGED_AS_IPV4.some(([, prefix, bits]) => v6.match(prefix, bits))) return lastIPv4(v6).range();
  const range = v6.range();
  // :: and ::1, inside ::/96, keep their own names.
  if (range === 'unspecified' || range === 'loopback') return range;
  const refused = REFUSED_FORMS.find(([, prefix, bits]) => v6.match(prefix, bits));
  if (refused) return refused[0];
  if (range !== 'unicast') return range;
  const [, , , , high, low] = v6.parts as number[];
  if (ISATAP_IDENTIFIERS.has(high! * 0x1_0000 + low!) && lastIPv4(v6).range() !== 'unicast') return 'isatap';
  return range;
}
