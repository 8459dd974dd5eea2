import { OutboundError, OutboundGuard, OutboundRefusedError } from '@runline/outbound';

type Addresses = Array<{ address: string; family: 4 | 6 }>;

/** A fake DNS that records the names it was asked for. */
function fakeDns(records: Record<string, Addresses>) {
  const asked: string[] = [];
  const lookup = async (hostname: string): Promise<Addresses> => {
    asked.push(hostname);
    const found = records[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { asked, lookup };
}

const v4 = (address: string) => ({ address, family: 4 as const });
const v6 = (address: string) => ({ address, family: 6 as const });

async function refusal(promise: Promise<unknown>): Promise<OutboundRefusedError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundRefusedError);
  expect(error).toBeInstanceOf(OutboundError);
  expect((error as OutboundError).code).toBe('REFUSED');
  return error as OutboundRefusedError;
}

describe('OutboundGuard.check: URLs refused before any DNS lookup', () => {
  it.each([
    ['http://127.0.0.1/', 'refused: 127.0.0.1 is a loopback address'],
    ['http://10.0.0.5/', 'refused: 10.0.0.5 is a private address'],
    ['http://172.16.0.1/', 'refused: 172.16.0.1 is a private address'],
    ['http://192.168.0.1/', 'refused: 192.168.0.1 is a private address'],
    ['http://169.254.169.254/latest/meta-data/', 'refused: 169.254.169.254 is a link-local address'],
    ['http://100.64.0.1/', 'refused: 100.64.0.1 is a carrier-grade NAT address'],
    ['http://0.0.0.0/', 'refused: 0.0.0.0 is an unspecified address'],
    ['http://0/', 'refused: 0.0.0.0 is an unspecified address'],
    ['http://224.0.0.1/', 'refused: 224.0.0.1 is a multicast address'],
    ['http://255.255.255.255/', 'refused: 255.255.255.255 is a broadcast address'],
    ['http://2130706433/', 'refused: 127.0.0.1 is a loopback address'],
    ['http://0x7f.1/', 'refused: 127.0.0.1 is a loopback address'],
    ['http://0177.0.0.1/', 'refused: 127.0.0.1 is a loopback address'],
    ['http://127.1/', 'refused: 127.0.0.1 is a loopback address'],
    ['http://[::1]/', 'refused: ::1 is a loopback address'],
    ['http://[::]/', 'refused: :: is an unspecified address'],
    ['http://[fe80::1]/', 'refused: fe80::1 is a link-local address'],
    ['http://[fc00::1]/', 'refused: fc00::1 is a unique-local address'],
    ['http://[::ffff:127.0.0.1]/', 'refused: ::ffff:7f00:1 is a loopback address'],
    ['http://[::ffff:7f00:1]/', 'refused: ::ffff:7f00:1 is a loopback address'],
    ['http://[64:ff9b::7f00:1]/', 'refused: 64:ff9b::7f00:1 is a loopback address'],
    ['http://[2002:7f00:1::1]/', 'refused: 2002:7f00:1::1 is a 6to4 address'],
    ['http://[2001::1]/', 'refused: 2001::1 is a Teredo address'],
    ['http://localhost/', 'refused: localhost is a local host name'],
    ['http://LOCALHOST./', 'refused: localhost. is a local host name'],
    ['http://api.localhost:8080/', 'refused: api.localhost is a local host name'],
    ['ftp://public.test/', 'refused: only http and https URLs are allowed'],
    ['file:///etc/passwd', 'refused: only http and https URLs are allowed'],
    ['javascript:alert(1)', 'refused: only http and https URLs are allowed'],
    ['/relative/path', 'refused: not a valid URL'],
    ['http://user:secret@public.test/', 'refused: URLs with credentials are not allowed'],
  ])('%s', async (url, message) => {
    const dns = fakeDns({ 'public.test': [v4('93.184.215.14')] });
    const guard = new OutboundGuard({ lookup: dns.lookup });
    const error = await refusal(guard.check(url));
    expect(error.message).toBe(message);
    expect(dns.asked).toEqual([]);
  });
});

describe('OutboundGuard.check: host names', () => {
  const dns = fakeDns({
    'public.test': [v4('93.184.215.14'), v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')],
    'internal.test': [v4('10.0.0.5')],
    'metadata.test': [v4('169.254.169.254')],
    'mixed.test': [v4('93.184.215.14'), v4('127.0.0.1')],
    'mapped.test': [v6('::ffff:192.168.0.10')],
    'nat64.test': [v6('64:ff9b::808:808')],
    'compat.test': [v6('::8.8.8.8')],
  });
  const guard = new OutboundGuard({ lookup: dns.lookup });

  it('allows a name whose addresses are all public', async () => {
    await expect(guard.check('https://public.test/hook')).resolves.toBeUndefined();
    await expect(guard.check('http://public.test/')).resolves.toBeUndefined();
    await expect(guard.check('https://nat64.test/')).resolves.toBeUndefined();
  });

  it.each([
    ['https://internal.test/', 'refused: internal.test resolves to 10.0.0.5, a private address'],
    ['https://metadata.test/', 'refused: metadata.test resolves to 169.254.169.254, a link-local address'],
    ['https://mixed.test/', 'refused: mixed.test resolves to 127.0.0.1, a loopback address'],
    ['https://mapped.test/', 'refused: mapped.test resolves to ::ffff:192.168.0.10, a private address'],
    ['https://compat.test/', 'refused: compat.test resolves to ::8.8.8.8, an IPv4-compatible address'],
  ])('refuses %s', async (url, message) => {
    expect((await refusal(guard.check(url))).message).toBe(message);
  });

  it('reports a name that does not resolve as a network error, not a refusal', async () => {
    const error: unknown = await guard.check('https://nowhere.test/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundError);
    expect(error).not.toBeInstanceOf(OutboundRefusedError);
    expect(error).toMatchObject({ code: 'NETWORK', message: 'could not resolve nowhere.test' });
  });

  it('with httpsOnly refuses http: and allows https:', async () => {
    const error = await refusal(guard.check('http://public.test/', { httpsOnly: true }));
    expect(error.message).toBe('refused: only https URLs are allowed');
    await expect(guard.check('https://public.test/', { httpsOnly: true })).resolves.toBeUndefined();
  });
});

describe('OutboundGuard.check: allowedCidrs', () => {
  const dns = fakeDns({ 'dev.test': [v4('127.0.0.1')], 'lan.test': [v4('10.1.2.3')] });
  const guard = new OutboundGuard({ allowedCidrs: ['127.0.0.0/8', '::1/128'], lookup: dns.lookup });

  it('allows the listed ranges, as literals, mapped forms and resolved names', async () => {
    await expect(guard.check('http://127.0.0.1:3000/')).resolves.toBeUndefined();
    await expect(guard.check('http://127.9.9.9/')).resolves.toBeUndefined();
    await expect(guard.check('http://[::ffff:127.0.0.1]/')).resolves.toBeUndefined();
    await expect(guard.check('http://[::1]/')).resolves.toBeUndefined();
    await expect(guard.check('http://dev.test/')).resolves.toBeUndefined();
  });

  it('still refuses everything else that is not public', async () => {
    expect((await refusal(guard.check('http://lan.test/'))).message).toBe(
      'refused: lan.test resolves to 10.1.2.3, a private address',
    );
    await refusal(guard.check('http://[::2]/'));
    await refusal(guard.check('http://169.254.169.254/'));
  });

  it('never allows localhost names, whose answer does not come from DNS', async () => {
    await refusal(guard.check('http://localhost/'));
  });

  it('rejects a bad range at construction', () => {
    expect(() => new OutboundGuard({ allowedCidrs: ['127.0.0.1'] })).toThrow('Not a CIDR range: "127.0.0.1"');
  });
});

describe('OutboundGuard.request: refused before sending', () => {
  const dns = fakeDns({ 'public.test': [v4('93.184.215.14')] });
  const guard = new OutboundGuard({ lookup: dns.lookup });

  it.each([
    [{ method: 'CONNECT', url: 'http://public.test/' }, 'refused: method CONNECT is not allowed'],
    [{ method: 'GE T', url: 'http://public.test/' }, 'refused: invalid method'],
    [{ method: 'GET', url: 'http://public.test/', headers: { 'bad name': 'x' } }, 'refused: invalid header name'],
    [{ method: 'GET', url: 'http://public.test/', headers: { 'x-a': 'a\r\nx-b: b' } }, 'refused: invalid value for header x-a'],
    [{ method: 'GET', url: 'http://public.test/', timeoutMs: 0 }, 'refused: timeoutMs and maxResponseBytes must be positive'],
    [{ method: 'POST', url: 'http://public.test/', httpsOnly: true }, 'refused: only https URLs are allowed'],
    [{ method: 'GET', url: 'http://10.0.0.1/' }, 'refused: 10.0.0.1 is a private address'],
  ])('%o', async (req, message) => {
    expect((await refusal(guard.request(req))).message).toBe(message);
  });

  it('rejects with ABORTED when the signal has already fired, without a lookup', async () => {
    const asked = dns.asked.length;
    const error: unknown = await guard
      .request({ method: 'GET', url: 'http://public.test/', signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ABORTED', message: 'request aborted' });
    expect(error).toBeInstanceOf(OutboundError);
    expect(dns.asked.length).toBe(asked);
  });

  it('counts a DNS lookup that hangs against the time cap', async () => {
    const hanging = new OutboundGuard({ lookup: () => new Promise<Addresses>(() => undefined) });
    const started = Date.now();
    const error: unknown = await hanging
      .request({ method: 'GET', url: 'https://slow-dns.test/', timeoutMs: 100 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundError);
    expect(error).toMatchObject({ code: 'TIMEOUT', message: 'timed out after 100 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
