import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed CIDR range, as `ipaddr.parseCIDR` returns it. */
export type AllowedCidr = [Address, number];

/** Addresses the guard must not reach although `ipaddr.js` calls them unicast. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96'); // deprecated (RFC 4291), may tunnel to any IPv4
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96'); // RFC 6052: the last 32 bits are an IPv4 address

const RANGE_NAMES: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  ipv4Mapped: 'an IPv4-mapped address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
};

/**
 * Parses IP literals in their canonical text forms only. `ipaddr.js` also reads `0x7f.1` or
 * `2130706433` as IPv4; such strings are host names here (the WHATWG URL parser has already
 * turned the ones in URLs into dotted quads).
 */
function parseAddress(address: string): Address | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  try {
    return family === 4 ? ipaddr.IPv4.parse(address) : ipaddr.IPv6.parse(dottedTailToHex(address));
  } catch {
    return undefined;
  }
}

/**
 * `ipaddr.js` reads `::a.b.c.d` as IPv4-mapped `::ffff:a.b.c.d`, but it is the IPv4-compatible
 * `::a.b.c.d` (glibc prints such addresses that way, so DNS answers arrive in this form).
 * Writing the tail as two hex groups keeps the address the socket would really use.
 */
function dottedTailToHex(address: string): string {
  const zoneAt = address.indexOf('%');
  const bare = zoneAt === -1 ? address : address.slice(0, zoneAt);
  const zone = zoneAt === -1 ? '' : address.slice(zoneAt);
  const hex = bare.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_tail, a: string, b: string, c: string, d: string) => {
    const group = (hi: string, lo: string) => ((Number(hi) << 8) | Number(lo)).toString(16);
    return `${group(a, b)}:${group(c, d)}`;
  });
  return hex + zone;
}

/**
 * Why `address` is not public unicast, or `undefined` when it is. IPv4-mapped IPv6 is judged
 * as the IPv4 it carries, and so is the NAT64 well-known prefix, which a DNS64 resolver returns
 * for every IPv4-only host on an IPv6-only network.
 */
export function refusalReason(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (parsed === undefined) return 'not an IP address';
  return judge(parsed);
}

function judge(parsed: Address): string | undefined {
  if (parsed instanceof ipaddr.IPv6) {
    if (parsed.isIPv4MappedAddress()) return judge(parsed.toIPv4Address());
    if (parsed.match(NAT64_WELL_KNOWN)) return judge(embeddedIPv4(parsed));
  }
  const range = parsed.range();
  if (range !== 'unicast') return rangeReason(range);
  if (parsed instanceof ipaddr.IPv6) {
    if (parsed.match(IPV4_COMPATIBLE)) return 'an IPv4-compatible address';
    // A zone only makes sense on a link; a public address never carries one.
    if (parsed.zoneId !== undefined) return 'a scoped address';
  }
  return undefined;
}

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  const [hi = 0, lo = 0] = address.parts.slice(6);
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function rangeReason(range: string): string {
  return RANGE_NAMES[range] ?? `not a public unicast address (${range})`;
}

/**
 * True when `address` (an IP literal, IPv4 or IPv6) is a public unicast address: not loopback,
 * private, link-local, carrier-grade NAT, unique-local, multicast, reserved, unspecified,
 * broadcast, nor an IPv6 form that leads to one of those (mapped, NAT64, 6to4, Teredo, …).
 */
export function isPublicUnicast(address: string): boolean {
  return refusalReason(address) === undefined;
}

/**
 * Parses CIDR ranges (`127.0.0.0/8`, `::1/128`) an operator allows in addition to public
 * addresses. Entries are trimmed and empty ones skipped, so `OUTBOUND_ALLOWED_CIDRS.split(',')`
 * can be passed as is. Throws on an entry that is not a CIDR range.
 */
export function parseAllowedCidrs(list: readonly string[]): AllowedCidr[] {
  return list
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      if (!ipaddr.isValidCIDR(entry)) throw new Error(`Not a CIDR range: "${entry}"`);
      return ipaddr.parseCIDR(entry);
    });
}

/** True when `address`, as written or as the IPv4 it maps to, falls in one of `ranges`. */
export function isInRanges(address: string, ranges: readonly AllowedCidr[]): boolean {
  if (ranges.length === 0) return false;
  const parsed = parseAddress(address);
  if (parsed === undefined) return false;
  const forms: Address[] = [parsed];
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) forms.push(parsed.toIPv4Address());
  return ranges.some(([network, bits]) =>
    forms.some((form) => form.kind() === network.kind() && form.match(network, bits)),
  );
}
