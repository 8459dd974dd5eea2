import { isPublicUnicast, parseAllowedCidrs } from '@runline/outbound';

describe('isPublicUnicast', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback, end of 127/8'],
    ['10.0.0.5', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private, end of 172.16/12'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT, end of range'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network 0/8'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast (SSDP)'],
    ['192.0.2.1', 'documentation (reserved)'],
    ['198.18.0.1', 'benchmarking (reserved)'],
    ['240.0.0.1', 'class E (reserved)'],
    ['::', 'IPv6 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with zone'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local fd00/8'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local (metadata)'],
    ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['::8.8.8.8', 'IPv4-compatible, even of a public address (not the mapped ::ffff:8.8.8.8)'],
    ['::127.0.0.1', 'IPv4-compatible loopback, dotted as glibc prints it'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback, dotted'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a00:5', 'NAT64 of private'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of link-local'],
    ['64:ff9b:1::808:808', 'local-use NAT64 prefix'],
    ['2002:7f00:1::1', '6to4'],
    ['2001::1', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['100::1', 'discard-only'],
    ['2130706433', 'not an address: decimal form is a name here'],
    ['0x7f.1', 'not an address: hex form is a name here'],
    ['0177.0.0.1', 'not an address: octal form is a name here'],
    ['example.com', 'not an address'],
    ['', 'empty'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicUnicast(address)).toBe(false);
  });

  it.each([
    ['8.8.8.8', 'public IPv4'],
    ['1.1.1.1', 'public IPv4'],
    ['172.15.255.255', 'just below 172.16/12'],
    ['172.32.0.1', 'just above 172.16/12'],
    ['100.128.0.1', 'just above carrier-grade NAT'],
    ['169.253.255.255', 'just below link-local'],
    ['192.169.0.1', 'just above 192.168/16'],
    ['223.255.255.254', 'just below multicast'],
    ['2001:4860:4860::8888', 'public IPv6'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::808:808', 'NAT64 of a public address (DNS64 on an IPv6-only network)'],
  ])('allows %s (%s)', (address) => {
    expect(isPublicUnicast(address)).toBe(true);
  });
});

describe('parseAllowedCidrs', () => {
  it('parses IPv4 and IPv6 ranges, trimming and skipping empty entries', () => {
    const ranges = parseAllowedCidrs([' 127.0.0.0/8', '', '::1/128 ']);
    expect(ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual(['127.0.0.0/8', '::1/128']);
  });

  it('accepts the comma-separated environment form split on commas', () => {
    expect(parseAllowedCidrs(''.split(','))).toEqual([]);
  });

  it.each(['127.0.0.1', '10.0.0.0/33', 'localhost/8', '::1/129'])('throws on %s', (entry) => {
    expect(() => parseAllowedCidrs([entry])).toThrow(`Not a CIDR range: "${entry}"`);
  });
});
