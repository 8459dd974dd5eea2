import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { isInRanges, parseAllowedCidrs, refusalReason, type AllowedCidr } from './address.policy.js';
import { OutboundError, OutboundRefusedError } from './outbound.error.js';
import { inClientSpan, type OutboundSpan } from './outbound-tracing.js';

/** One outbound HTTP request. */
export interface OutboundRequest {
  method: string;
  /** An absolute `http:` or `https:` URL without credentials. */
  url: string;
  /** `host`, `content-length` and `transfer-encoding` are set by the guard and ignored here. */
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Cap on the whole exchange, DNS lookup to last body byte; the guard's default otherwise. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Refuse `http:` URLs (callbacks). */
  httpsOnly?: boolean;
  /** Cap on the response body; the guard's default otherwise. */
  maxResponseBytes?: number;
  /**
   * The name (and any attributes of its own) of the request's CLIENT span, whose id the
   * `traceparent` sent names; by default the span is named after the method.
   */
  span?: OutboundSpan;
}

/** The answer, whatever its status: a 3xx is returned, never followed. */
export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface OutboundGuardOptions {
  /** CIDR ranges allowed besides public unicast addresses (`127.0.0.0/8` in development and tests). */
  allowedCidrs?: readonly string[];
  /** Default 10 000. */
  defaultTimeoutMs?: number;
  /** Default 1 MiB. */
  maxResponseBytes?: number;
  /** Certificate authorities for HTTPS, replacing the default ones (like node's `ca`); for tests. */
  ca?: string | Buffer;
  /** Resolves a host name to all its addresses; `dns.lookup` by default. For tests: fake DNS. */
  lookup?: (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;
  /**
   * Keep connections open for reuse (default true). A connection is only ever reused for the
   * same vetted address, port, scheme and host name (SNI and certificate check), so reuse never
   * skips a check the guard would make on a new connection.
   */
  keepAlive?: boolean;
  /** Connections per vetted address at most (default 64). */
  maxSocketsPerAddress?: number;
}

type ResolvedAddress = { address: string; family: 4 | 6 };

/** A URL that passed the checks, with the addresses the connection may use. */
interface VettedTarget {
  url: URL;
  host: string;
  addresses: ResolvedAddress[];
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const MAX_TIMER_MS = 2 ** 31 - 1;
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const GUARD_SET_HEADERS = new Set(['host', 'content-length', 'transfer-encoding']);
/** Distinct (address, host) pools kept; the least recently used one is closed beyond this. */
const MAX_POOLS = 256;
/** Hosts whose verdict (refused, literal address, name to look up) is kept. */
const MAX_HOST_VERDICTS = 1024;
/**
 * Idle pooled connections are closed after this long: less than the keep-alive timeout servers
 * commonly close them after (Node's http server: 5 s), so a request seldom goes out on a
 * connection the server is closing at that moment.
 */
const IDLE_SOCKET_MS = 4_000;
/**
 * Methods a client may send again on its own when the connection fails before any answer
 * (RFC 9110 section 9.2.2). Only these are repeated after a reused connection turned out closed.
 */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * The single way the system makes outbound HTTP requests (http nodes of runs, callbacks,
 * polls). It refuses URLs whose host is, or resolves to, anything but a public unicast address
 * (unless an allowed CIDR range covers it), then connects to exactly the addresses it checked:
 * the socket's `lookup` returns them instead of asking DNS again, so a record that changes
 * between check and connect cannot redirect the request. Host header, SNI and certificate
 * checks still use the host name. Redirects are not followed; time and response size are
 * capped. Every failure rejects with an `OutboundError`.
 */
export class OutboundGuard {
  private readonly allowed: readonly AllowedCidr[];
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly ca: string | Buffer | undefined;
  private readonly resolveHost: (hostname: string) => Promise<ResolvedAddress[]>;
  private readonly keepAlive: boolean;
  private readonly maxSockets: number;
  /** One agent per vetted (scheme, address, port, host): its sockets can only lead there. */
  // An evicted or cleared pool's connections are closed with it.
  private readonly pools = new LRUCache<string, http.Agent>({ max: MAX_POOLS, dispose: (agent) => agent.destroy() });
  /** `hostVerdict` per host seen lately. */
  private readonly hostVerdicts = new LRUCache<string, { verdict: string | ResolvedAddress[] | undefined }>({ max: MAX_HOST_VERDICTS });

  constructor(options: OutboundGuardOptions = {}) {
    this.allowed = parseAllowedCidrs(options.allowedCidrs ?? []);
    this.timeoutMs = positive(options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS, 'defaultTimeoutMs');
    this.maxResponseBytes = positive(options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
    this.ca = options.ca;
    this.resolveHost = options.lookup ?? systemLookup;
    this.keepAlive = options.keepAlive ?? true;
    this.maxSockets = positive(options.maxSocketsPerAddress ?? 64, 'maxSocketsPerAddress');
  }

  /** Closes pooled connections (at shutdown). Requests made later open new ones. */
  close(): void {
    this.pools.clear();
  }

  /** Throws `OutboundRefusedError` if the URL or an address it resolves to would be refused, without sending. */
  async check(url: string, opts: { httpsOnly?: boolean } = {}): Promise<void> {
    await withDeadline(this.timeoutMs, undefined, (deadline) => this.vet(url, opts.httpsOnly ?? false, deadline));
  }

  async request(req: OutboundRequest): Promise<OutboundResponse> {
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const maxBytes = req.maxResponseBytes ?? this.maxResponseBytes;
    if (!(timeoutMs > 0) || !(maxBytes > 0)) {
      throw new OutboundRefusedError('timeoutMs and maxResponseBytes must be positive');
    }
    const method = req.method.toUpperCase();
    if (!HTTP_TOKEN.test(method)) throw new OutboundRefusedError('invalid method');
    // CONNECT turns the connection into a tunnel, which is not a request/response exchange.
    if (method === 'CONNECT') throw new OutboundRefusedError('method CONNECT is not allowed');
    const body = req.body === undefined ? undefined : toBuffer(req.body);
    const headers = outgoingHeaders(req.headers ?? {}, body);
    // Parsed once, for the span and the checks; one that does not parse is refused in the span.
    const url = URL.parse(req.url) ?? req.url;

    return inClientSpan(
      method,
      url,
      headers,
      () =>
        withDeadline(timeoutMs, req.signal, async (deadline) => {
          const target = await this.vet(url, req.httpsOnly ?? false, deadline);
          try {
            return await this.send(target, { method, headers, body }, maxBytes, deadline);
          } catch (error) {
            // A kept-alive connection the server closed as this request went out: nothing was
            // answered, so an idempotent request goes again once, on another connection.
            if (!(error instanceof StaleConnectionError) || !IDEMPOTENT_METHODS.has(method)) throw error;
            return this.send(target, { method, headers, body }, maxBytes, deadline);
          }
        }),
      req.span,
    );
  }

  private async vet(given: string | URL, httpsOnly: boolean, deadline: Deadline): Promise<VettedTarget> {
    const url = typeof given === 'string' ? URL.parse(given) : given;
    if (url === null) throw new OutboundRefusedError('not a valid URL');
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundRefusedError('only http and https URLs are allowed');
    }
    if (httpsOnly && url.protocol !== 'https:') throw new OutboundRefusedError('only https URLs are allowed');
    // As fetch does: credentials in a URL end up in logs, and an Authorization header says it plainly.
    if (url.username !== '' || url.password !== '') {
      throw new OutboundRefusedError('URLs with credentials are not allowed');
    }

    // The WHATWG parser has already turned `2130706433` or `0x7f.1` into `127.0.0.1`.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const verdict = this.hostVerdict(host);
    if (typeof verdict === 'string') throw new OutboundRefusedError(verdict);
    if (verdict !== undefined) return { url, host, addresses: verdict };

    const addresses = await abortable(this.lookup(host), deadline);
    for (const { address } of addresses) {
      // One bad address refuses the host: the connection may not pick which one it gets.
      const reason = this.refusalReason(address);
      if (reason !== undefined) throw new OutboundRefusedError(`${host} resolves to ${address}, ${reason}`);
    }
    return { url, host, addresses };
  }

  /**
   * What the host alone decides, before any lookup: why it is refused (a local name, a literal
   * address that is not allowed), the address of an allowed literal, or undefined for a name
   * DNS must answer. A function of the host and the allowed ranges only, so it is kept per host
   * (a poller asks it for the same hosts thousands of times a second); names are still looked
   * up on every request.
   */
  private hostVerdict(host: string): string | ResolvedAddress[] | undefined {
    const known = this.hostVerdicts.get(host);
    if (known !== undefined) return known.verdict;
    let verdict: string | ResolvedAddress[] | undefined;
    const literalFamily = isIP(host);
    if (isLocalhostName(host)) verdict = `${host} is a local host name`;
    else if (literalFamily !== 0) {
      const reason = this.refusalReason(host);
      verdict = reason !== undefined ? `${host} is ${reason}` : [{ address: host, family: literalFamily === 4 ? 4 : 6 }];
    }
    this.hostVerdicts.set(host, { verdict });
    return verdict;
  }

  private refusalReason(address: string): string | undefined {
    return isInRanges(address, this.allowed) ? undefined : refusalReason(address);
  }

  private async lookup(host: string): Promise<ResolvedAddress[]> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolveHost(host);
    } catch (error) {
      throw new OutboundError('NETWORK', `could not resolve ${host}`, { cause: error });
    }
    if (addresses.length === 0) throw new OutboundError('NETWORK', `could not resolve ${host}`);
    return addresses;
  }

  private send(
    target: VettedTarget,
    outgoing: { method: string; headers: Record<string, string>; body: Buffer | undefined },
    maxBytes: number,
    deadline: Deadline,
  ): Promise<OutboundResponse> {
    const { url, host } = target;
    const isHttps = url.protocol === 'https:';
    const port = url.port === '' ? undefined : Number(url.port);
    const options: https.RequestOptions = {
      method: outgoing.method,
      hostname: host,
      port,
      path: `${url.pathname}${url.search}`,
      headers: outgoing.headers,
    };
    if (isHttps && this.ca !== undefined) options.ca = this.ca;
    if (this.keepAlive) {
      // The first vetted address only: every socket of this agent leads there.
      options.agent = this.pool(isHttps, target.addresses[0]!, port, host);
    } else {
      options.lookup = pinnedLookup(target.addresses);
      options.agent = false;
    }

    return new Promise<OutboundResponse>((resolve, reject) => {
      if (deadline.reason !== undefined) {
        reject(deadline.reason);
        return;
      }
      let settled = false;
      const clientRequest = (isHttps ? https : http).request(options);
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        deadline.unwatch();
        return true;
      };
      const fail = (error: OutboundError): void => {
        if (!settle()) return;
        clientRequest.destroy();
        reject(error);
      };
      deadline.watch(fail);

      let answered = false;
      clientRequest.on('error', (error) =>
        fail(clientRequest.reusedSocket && !answered && STALE_CONNECTION_CODES.has((error as NodeJS.ErrnoException).code ?? '') ? new StaleConnectionError(host, error) : networkError(host, error)),
      );
      clientRequest.on('upgrade', (_response, socket) => {
        socket.destroy();
        fail(new OutboundError('NETWORK', `${host} switched protocols, which is not supported`));
      });
      clientRequest.on('response', (response) => {
        answered = true;
        const tooLarge = () => new OutboundError('TOO_LARGE', `response larger than ${maxBytes} bytes`);
        // Read once from the raw list (node's own `headers` object would be a second copy).
        const headers = joinHeaders(response.rawHeaders);
        // A HEAD or 304 answer declares the length of a body it does not carry.
        const hasBody = outgoing.method !== 'HEAD' && response.statusCode !== 304;
        if (hasBody && Number(headers['content-length']) > maxBytes) {
          fail(tooLarge());
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) fail(tooLarge());
          else chunks.push(chunk);
        });
        response.on('end', () => {
          if (!settle()) return;
          resolve({
            status: response.statusCode ?? 0,
            headers,
            body: Buffer.concat(chunks, received),
          });
        });
        response.on('error', (error) => fail(networkError(host, error)));
        response.on('close', () => {
          if (!response.complete) {
            fail(new OutboundError('NETWORK', `${host} closed the connection before the response was complete`));
          }
        });
      });
      clientRequest.end(outgoing.body);
    });
  }

  /**
   * The keep-alive agent for one vetted address. Its `lookup` answers with that address only,
   * and the key holds everything a connection was checked against (scheme, address, port, host
   * name for SNI and the certificate), so a reused socket is one this request would have opened.
   */
  private pool(isHttps: boolean, address: ResolvedAddress, port: number | undefined, host: string): http.Agent {
    const key = `${isHttps ? 'https' : 'http'}|${address.family}|${address.address}|${port ?? ''}|${host}`;
    let agent = this.pools.get(key);
    if (agent !== undefined) return agent;
    const options = {
      keepAlive: true,
      maxSockets: this.maxSockets,
      maxFreeSockets: this.maxSockets,
      timeout: IDLE_SOCKET_MS,
      scheduling: 'lifo' as const,
      lookup: pinnedLookup([address]),
      ...(isHttps && this.ca !== undefined ? { ca: this.ca } : {}),
    };
    agent = isHttps ? new https.Agent(options) : new http.Agent(options);
    this.pools.set(key, agent);
    return agent;
  }
}

function positive(value: number, name: string): number {
  if (!(value > 0)) throw new RangeError(`${name} must be a positive number`);
  return value;
}

async function systemLookup(hostname: string): Promise<ResolvedAddress[]> {
  const addresses = await dnsLookup(hostname, { all: true });
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/** `localhost` and its subdomains (RFC 6761) resolve locally, whatever DNS says; refused without a lookup. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** A socket `lookup` that answers with the vetted addresses instead of asking DNS. */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const candidates = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    const [first] = candidates;
    if (first === undefined) {
      callback(Object.assign(new Error('no vetted address of the requested family'), { code: 'ENOTFOUND' }), '');
    } else if (options.all === true) {
      callback(null, candidates.map(({ address, family: f }) => ({ address, family: f })));
    } else {
      callback(null, first.address, first.family);
    }
  };
}

function toBuffer(body: string | Uint8Array): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

function outgoingHeaders(given: Record<string, string>, body: Buffer | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    try {
      http.validateHeaderName(name);
    } catch {
      throw new OutboundRefusedError('invalid header name');
    }
    try {
      http.validateHeaderValue(name, value);
    } catch {
      throw new OutboundRefusedError(`invalid value for header ${name}`);
    }
    if (!GUARD_SET_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  if (body !== undefined) headers['content-length'] = String(body.length);
  return headers;
}

/**
 * The answer's headers by lower-case name, repeated ones joined with `, ` in the order received
 * (what `headersDistinct` holds, joined), read straight from the raw name/value list.
 */
function joinHeaders(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const earlier = headers[name];
    headers[name] = earlier === undefined ? raw[i + 1]! : `${earlier}, ${raw[i + 1]!}`;
  }
  return headers;
}

const NETWORK_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host name',
};

/** A socket or TLS failure, described by its code only: the raw message may carry internals. */
/** A reused connection failed with one of these before any answer: the server had closed it. */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** The request went out on a kept-alive connection the server had closed; nothing was answered. */
class StaleConnectionError extends OutboundError {
  constructor(host: string, error: Error) {
    super('NETWORK', networkError(host, error).message, { cause: error });
  }
}

function networkError(host: string, error: Error): OutboundError {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  let reason = NETWORK_REASONS[code];
  if (reason === undefined) {
    if (code.startsWith('HPE_')) reason = 'invalid HTTP response';
    else if (/CERT|SSL|TLS|ISSUER|SIGNATURE/.test(code)) reason = `TLS certificate rejected (${code})`;
    else reason = 'connection failed';
  }
  return new OutboundError('NETWORK', `network error reaching ${host}: ${reason}`, { cause: error });
}

/** Runs `work` under one deadline: the time cap, or `outer` aborting first. */
async function withDeadline<T>(timeoutMs: number, outer: AbortSignal | undefined, work: (deadline: Deadline) => Promise<T>): Promise<T> {
  if (outer?.aborted === true) throw abortedError();
  const deadline = new Deadline(timeoutMs, outer);
  try {
    return await work(deadline);
  } finally {
    deadline.end();
  }
}

function abortedError(): OutboundError {
  return new OutboundError('ABORTED', 'request aborted');
}

/**
 * The end of one request's time: its cap, or the caller's signal aborting first. A timer and a
 * callback slot instead of an AbortController per request (an EventTarget, its listeners added
 * and removed on every step). One step waits on it at a time (the DNS lookup, then each send),
 * so one slot is enough.
 */
class Deadline {
  /** Why the request must stop, once the cap passed or the caller aborted. */
  reason: OutboundError | undefined;
  private onExpire: ((reason: OutboundError) => void) | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onOuterAbort: (() => void) | undefined;

  constructor(
    timeoutMs: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    // Beyond MAX_TIMER_MS node fires at once (TimeoutOverflowWarning).
    this.timer = setTimeout(() => this.expire(new OutboundError('TIMEOUT', `timed out after ${timeoutMs} ms`)), Math.min(timeoutMs, MAX_TIMER_MS));
    if (outer !== undefined) {
      this.onOuterAbort = () => this.expire(abortedError());
      outer.addEventListener('abort', this.onOuterAbort, { once: true });
    }
  }

  /** `onExpire` runs once if the deadline comes before `unwatch`. */
  watch(onExpire: (reason: OutboundError) => void): void {
    this.onExpire = onExpire;
  }

  unwatch(): void {
    this.onExpire = undefined;
  }

  /** The request is over: the timer and the caller's signal are let go. */
  end(): void {
    clearTimeout(this.timer);
    if (this.onOuterAbort !== undefined) this.outer?.removeEventListener('abort', this.onOuterAbort);
  }

  private expire(reason: OutboundError): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const onExpire = this.onExpire;
    this.onExpire = undefined;
    onExpire?.(reason);
  }
}

/** Settles with `promise`, or rejects with the deadline's reason as soon as it comes. */
function abortable<T>(promise: Promise<T>, deadline: Deadline): Promise<T> {
  if (deadline.reason !== undefined) return Promise.reject(deadline.reason);
  return new Promise<T>((resolve, reject) => {
    deadline.watch(reject);
    promise.then(
      (value) => {
        deadline.unwatch();
        resolve(value);
      },
      (error: unknown) => {
        deadline.unwatch();
        reject(error);
      },
    );
  });
}
