import { OutboundError, OutboundGuard } from '@runline/outbound';
import { startServer, type LocalServer } from './local-servers.js';

type Addresses = Array<{ address: string; family: 4 | 6 }>;

/** Names that exist only in this fake DNS; each leads somewhere the guard must not go. */
const RECORDS: Record<string, string[]> = {
  'loopback.test': ['127.0.0.1'],
  'private.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'zero.test': ['0.0.0.0'],
  'cgnat.test': ['100.64.0.1'],
  'v6-loopback.test': ['::1'],
  'ula.test': ['fd00::1'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'nat64.test': ['64:ff9b::7f00:1'],
  'sixtofour.test': ['2002:7f00:1::1'],
  // One public and one private record: the connection could pick either, so the name is refused.
  'mixed.test': ['93.184.215.14', '127.0.0.1'],
  'mixed-v6.test': ['2606:4700:4700::1111', '::1'],
  'public-then-private.test': ['8.8.8.8', '1.1.1.1', '192.168.1.10'],
};

function fakeDns() {
  const asked: string[] = [];
  const lookup = async (hostname: string): Promise<Addresses> => {
    asked.push(hostname);
    const found = RECORDS[hostname];
    if (found === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { asked, lookup };
}

/**
 * Host forms that all point at something that is not public unicast. The literal forms are
 * written as a client would write them in a URL; the WHATWG parser turns the IPv4 short, hex,
 * octal and integer notations into dotted quads, which the guard then judges.
 */
const LITERAL_HOSTS = [
  // IPv4 loopback, every notation
  '127.0.0.1', '127.1', '127.0.1', '2130706433', '0x7f000001', '0x7f.0.0.1', '0x7f.1', '0177.0.0.1', '0177.1',
  '017700000001', '127.000.000.001', '127.255.255.254', '0x7F.0x00.0x00.0x01',
  // unspecified / this network
  '0.0.0.0', '0', '0x0', '0.1.2.3',
  // private, link-local, CGNAT, multicast, broadcast, reserved (with a few in other notations)
  '10.0.0.1', '012.0.0.1', '0xa.0.0.1', '167772161', '172.16.0.1', '172.31.255.255', '192.168.1.1', '0xc0a80101',
  '169.254.169.254', '0xa9fea9fe', '2852039166', '100.64.0.1', '224.0.0.1', '239.255.255.250', '255.255.255.255',
  '198.18.0.1', '240.0.0.1',
  // IPv6 loopback, unspecified, unique-local, link-local, site-local, multicast
  '[::1]', '[0:0:0:0:0:0:0:1]', '[::]', '[fc00::1]', '[fd12:3456:789a::1]', '[fe80::1]', '[fec0::1]', '[ff02::1]',
  // IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo
  '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::ffff:10.0.0.1]', '[::ffff:a9fe:a9fe]', '[::127.0.0.1]', '[::7f00:1]',
  '[64:ff9b::127.0.0.1]', '[64:ff9b::7f00:1]', '[64:ff9b::a00:1]', '[64:ff9b:1::a00:1]', '[2002:7f00:1::1]', '[2002:a00:1::1]',
  '[2001::1]',
  // localhost names (never asked of DNS)
  'localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'a.b.LocalHost',
];
const DNS_HOSTS = Object.keys(RECORDS);

describe('OutboundGuard refuses every non-public address form, with no connection made', () => {
  let canary4: LocalServer;
  let canary6: LocalServer | undefined;
  beforeAll(async () => {
    canary4 = await startServer((_req, res) => res.end('canary reached'));
    try {
      canary6 = await startServer((_req, res) => res.end('canary reached'), undefined, '::1');
    } catch {
      canary6 = undefined; // no IPv6 loopback on this machine; the IPv4 canary still counts
    }
  });
  afterAll(async () => {
    await canary4.close();
    await canary6?.close();
  });

  const hosts = [...LITERAL_HOSTS, ...DNS_HOSTS];

  it('covers at least 40 forms', () => {
    expect(new Set(hosts).size).toBeGreaterThanOrEqual(40);
  });

  it.each(hosts)('%s is refused by check() and request(), over http and https', async (host) => {
    const dns = fakeDns();
    const guard = new OutboundGuard({ lookup: dns.lookup });
    const urls = [`http://${host}:${canary4.port}/hook`, `https://${host}:${canary4.port}/hook`];
    if (canary6) urls.push(`http://${host}:${canary6.port}/hook`);
    for (const url of urls) {
      const checked: unknown = await guard.check(url).catch((e: unknown) => e);
      expect(checked).toBeInstanceOf(OutboundError);
      expect(checked).toMatchObject({ code: 'REFUSED' });
      const sent: unknown = await guard.request({ method: 'POST', url, body: '{}' }).catch((e: unknown) => e);
      expect(sent).toBeInstanceOf(OutboundError);
      expect(sent).toMatchObject({ code: 'REFUSED' });
      expect((sent as Error).message).toMatch(/^refused: /);
    }
    // Only the .test names were looked up; literals and localhost names never reach DNS.
    expect(dns.asked.every((name) => name.endsWith('.test'))).toBe(true);
    expect(canary4.connections()).toBe(0);
    expect(canary6?.connections() ?? 0).toBe(0);
    guard.close();
  });

  it('the canary is reachable when the range is allowed (the test can fail)', async () => {
    const guard = new OutboundGuard({ allowedCidrs: ['127.0.0.0/8'], lookup: fakeDns().lookup });
    const response = await guard.request({ method: 'GET', url: `http://0x7f.1:${canary4.port}/` });
    expect(response.body.toString()).toBe('canary reached');
    guard.close();
    expect(canary4.connections()).toBe(1);
  });
});
