import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https, { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { sign } from '@octokit/webhooks-methods';

/**
 * A local GitHub: a real HTTPS server that answers the repository hooks REST API the way
 * GitHub documents it, and that, like GitHub, delivers signed webhook events to the hooks it
 * holds. What it follows:
 * - "REST API endpoints for repository webhooks" (https://docs.github.com/en/rest/webhooks/repos):
 *   `POST /repos/{owner}/{repo}/hooks` → 201 with the hook (the secret never comes back: GitHub
 *   masks it), `GET …/hooks`, `GET …/hooks/{hook_id}`, `DELETE …/hooks/{hook_id}` → 204, 404 for
 *   a hook or repository that is not there (or that the token may not see).
 * - "Troubleshooting the REST API" (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api):
 *   errors as `{message, documentation_url}`; 401 `Bad credentials` / `Requires authentication`;
 *   400 `Problems parsing JSON` and `Body should be a JSON object`; 422 `Invalid request` for a
 *   parameter of the wrong type and `Validation Failed` with `errors` (`code` `custom` carries
 *   a `message`); 403 without a User-Agent; 400 for an unsupported `X-GitHub-Api-Version`;
 *   403 `Resource not accessible by personal access token` for a token without the permission.
 * - "Rate limits for the REST API" (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
 *   `x-ratelimit-*` headers on every answer; when asked, a primary limit (403, remaining 0 and
 *   `x-ratelimit-reset`), a secondary limit (403 with `retry-after`) or a 429.
 * - "Webhook events and payloads" (https://docs.github.com/en/webhooks/webhook-events-and-payloads),
 *   Delivery headers and the `ping` event: right after a hook is created GitHub sends it a
 *   `ping`; every delivery carries `X-GitHub-Event`, `X-GitHub-Delivery` (a GUID),
 *   `X-GitHub-Hook-ID`, `X-Hub-Signature-256` (signed here with `@octokit/webhooks-methods`,
 *   GitHub's own library) and the legacy SHA-1 `X-Hub-Signature`, from a `GitHub-Hookshot/` agent.
 *
 * The docs give the shape of a 422, not every text: `Hook already exists on this repository` is
 * what GitHub answers for a duplicate hook; the texts for a missing `config.url` and an unknown
 * event are the fake's own, in the same shape.
 */

const DOCS = 'https://docs.github.com/rest';
const HOOKS_DOCS = 'https://docs.github.com/rest/repos/webhooks';
const RATE_LIMIT_DOCS = 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api';
const SUPPORTED_API_VERSIONS = new Set(['2022-11-28', '2026-03-10']);
const RATE_LIMIT = 5000;

/** The events the fake lets a hook subscribe to (a sample of GitHub's list, and `*`). */
const KNOWN_EVENTS = new Set(['*', 'push', 'pull_request', 'issues', 'issue_comment', 'release', 'create', 'delete', 'workflow_run', 'meta', 'star', 'watch', 'fork']);

export interface FakeHookConfig {
  url: string;
  content_type: string;
  secret?: string;
  insecure_ssl: string;
}

export interface FakeHook {
  id: number;
  /** `owner/repo` as it was granted. */
  repository: string;
  name: string;
  active: boolean;
  events: string[];
  config: FakeHookConfig;
  createdAt: string;
  deleted: boolean;
}

/** One REST call as the fake received it. */
export interface FakeApiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The parsed JSON body; undefined when there was none or it did not parse. */
  body: unknown;
  /** What the fake answered. */
  status: number;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** One webhook delivery the fake sent, and what the receiver answered. */
export interface FakeDelivery {
  hookId: number;
  event: string;
  deliveryId: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  responseBody: string;
}

export interface DeliverOptions {
  /** Re-send under an earlier GUID, as GitHub's "Redeliver" does. */
  deliveryId?: string;
  /** Sign with another secret than the hook's (a forged delivery). */
  signWith?: string;
  /** Send this `X-Hub-Signature-256` value instead of the right one. */
  signature?: string;
  /** GitHub only sends subscribed events; this sends one anyway. */
  evenIfUnsubscribed?: boolean;
  /** A delivery that was already on its way when the hook was deleted. */
  evenIfDeleted?: boolean;
}

export type RateLimitKind = 'primary' | 'secondary' | 'too-many-requests';

export interface GithubFake {
  /** The API base URL, `https://127.0.0.1:<port>` (GITHUB_API_URL). */
  url: string;
  /** Every REST call received, in order. */
  requests: FakeApiRequest[];
  /** Every delivery sent, in order (pings included). */
  deliveries: FakeDelivery[];
  /** Lets `token` manage the hooks of `repository` (`admin`) or only see it (`read`). */
  grant(token: string, repository: string, access?: 'admin' | 'read'): void;
  /** The hooks of a repository, deleted ones excluded. */
  hooksOf(repository: string): FakeHook[];
  hook(id: number): FakeHook | undefined;
  /** Deletes a hook behind our back (someone removed it in the repository's settings). */
  forget(id: number): void;
  /** The next `times` calls are refused by a rate limit of that kind. */
  rateLimitNext(kind: RateLimitKind, times?: number, waitSeconds?: number): void;
  /** The next `times` calls answer this 5xx status. */
  failNext(status: number, times?: number): void;
  /** Sends `event` to the hook's url, signed as GitHub signs, and resolves once it was answered. */
  deliver(hookId: number, event: string, payload: Record<string, unknown>, options?: DeliverOptions): Promise<FakeDelivery>;
  /** Resolves when the ping of this hook has been answered. */
  pinged(hookId: number): Promise<FakeDelivery>;
  close(): Promise<void>;
}

export interface GithubFakeOptions {
  key: string;
  cert: string;
  /** Trusted for deliveries to HTTPS hook urls (the test receiver's certificate). */
  deliveryCa?: string;
  /**
   * How long after the 201 the ping goes out (default at once). GitHub queues it: it reaches
   * the hook after the create call has been answered, not within it.
   */
  pingDelayMs?: number;
}

export async function startGithubFake(options: GithubFakeOptions): Promise<GithubFake> {
  const requests: FakeApiRequest[] = [];
  const deliveries: FakeDelivery[] = [];
  const hooks = new Map<number, FakeHook>();
  const access = new Map<string, Map<string, 'admin' | 'read'>>();
  const pings = new Map<number, Promise<FakeDelivery>>();
  const pending = new Set<Promise<unknown>>();
  const refusals: Array<{ kind: RateLimitKind; wait: number } | { status: number }> = [];
  let nextHookId = 500_000_000 + Math.floor(Math.random() * 1000) * 1000;
  let used = 0;

  const repoKey = (owner: string, repo: string) => `${owner}/${repo}`.toLowerCase();

  const deliver = async (hookId: number, event: string, payload: Record<string, unknown>, opts: DeliverOptions = {}): Promise<FakeDelivery> => {
    const hook = hooks.get(hookId);
    if (hook === undefined || (hook.deleted && !opts.evenIfDeleted)) throw new Error(`hook ${hookId} does not exist at the fake`);
    if (!opts.evenIfUnsubscribed && event !== 'ping' && !hook.events.includes(event) && !hook.events.includes('*')) {
      throw new Error(`hook ${hookId} is not subscribed to ${event}; GitHub would not send it`);
    }
    return sendDelivery(hook, event, payload, opts);
  };

  /** Signs and POSTs one delivery to the hook's url, and records it with the answer. */
  const sendDelivery = async (hook: FakeHook, event: string, payload: Record<string, unknown>, opts: DeliverOptions = {}): Promise<FakeDelivery> => {
    const hookId = hook.id;
    const body = JSON.stringify(payload);
    const secret = opts.signWith ?? hook.config.secret;
    const deliveryId = opts.deliveryId ?? randomUUID();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/7a9c1e2',
      'x-github-delivery': deliveryId,
      'x-github-event': event,
      'x-github-hook-id': String(hook.id),
      'x-github-hook-installation-target-id': '1296269',
      'x-github-hook-installation-target-type': 'repository',
    };
    // Signature headers are only sent when the hook has a secret ("Delivery headers").
    if (secret !== undefined) {
      headers['x-hub-signature'] = `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;
      headers['x-hub-signature-256'] = opts.signature ?? (await sign(secret, body));
    } else if (opts.signature !== undefined) headers['x-hub-signature-256'] = opts.signature;
    const answer = await post(hook.config.url, headers, body, options.deliveryCa);
    const delivery: FakeDelivery = { hookId, event, deliveryId, headers, body, status: answer.status, responseBody: answer.body };
    deliveries.push(delivery);
    return delivery;
  };

  const handle = (req: IncomingMessage, raw: string, res: ServerResponse): void => {
    const arrivedAt = Date.now();
    const url = new URL(req.url ?? '/', 'https://fake.invalid');
    const record = (status: number) => {
      let parsed: unknown;
      try {
        parsed = raw === '' ? undefined : (JSON.parse(raw) as unknown);
      } catch {
        parsed = undefined;
      }
      requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, raw, body: parsed, status, at: arrivedAt });
      used += 1;
      const headers: Record<string, string> = {
        'x-ratelimit-limit': String(RATE_LIMIT),
        'x-ratelimit-remaining': String(Math.max(0, RATE_LIMIT - used)),
        'x-ratelimit-used': String(used),
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
        'x-ratelimit-resource': 'core',
        'x-github-api-version-selected': '2022-11-28',
      };
      return headers;
    };
    const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      const headers = { ...record(status), ...extra };
      if (body === undefined) res.writeHead(status, headers).end();
      else res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    const error = (status: number, message: string, docs = DOCS, extra: Record<string, unknown> = {}) =>
      send(status, { message, ...extra, documentation_url: docs, status: String(status) });

    const refusal = refusals.shift();
    if (refusal !== undefined) {
      if ('status' in refusal) {
        send(refusal.status, { message: 'Server Error' });
        return;
      }
      const reset = Math.floor(Date.now() / 1000) + refusal.wait;
      if (refusal.kind === 'primary') {
        const headers = { ...record(403), 'x-ratelimit-remaining': '0', 'x-ratelimit-used': String(RATE_LIMIT), 'x-ratelimit-reset': String(reset) };
        res.writeHead(403, { ...headers, 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ message: 'API rate limit exceeded for user ID 583231.', documentation_url: RATE_LIMIT_DOCS, status: '403' }));
      } else {
        const status = refusal.kind === 'secondary' ? 403 : 429;
        send(status, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: `${RATE_LIMIT_DOCS}#about-secondary-rate-limits`, status: String(status) }, { 'retry-after': String(refusal.wait) });
      }
      return;
    }

    if (!req.headers['user-agent']) {
      error(403, 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.', `${DOCS}/using-the-rest-api/getting-started-with-the-rest-api#user-agent`);
      return;
    }
    const version = req.headers['x-github-api-version'];
    if (typeof version === 'string' && !SUPPORTED_API_VERSIONS.has(version)) {
      error(400, `API version '${version}' is not supported.`, `${DOCS}/overview/api-versions`);
      return;
    }
    const authorization = req.headers.authorization;
    if (authorization === undefined) {
      error(401, 'Requires authentication');
      return;
    }
    const token = /^(?:Bearer|token) (.+)$/i.exec(authorization)?.[1];
    const grants = token === undefined ? undefined : access.get(token);
    if (grants === undefined) {
      error(401, 'Bad credentials');
      return;
    }

    const route = /^\/repos\/([^/]+)\/([^/]+)\/hooks(?:\/([^/]+))?$/.exec(url.pathname);
    const key = route ? repoKey(decodeURIComponent(route[1]!), decodeURIComponent(route[2]!)) : undefined;
    // A repository the token may not see is "Not Found", never 403: GitHub does not confirm it exists.
    const permission = key === undefined ? undefined : grants.get(key);
    if (route === null || key === undefined || permission === undefined) {
      error(404, 'Not Found', HOOKS_DOCS);
      return;
    }
    const hookIdText = route[3];
    const method = req.method ?? '';

    if (hookIdText === undefined && method === 'GET') {
      send(200, [...hooks.values()].filter((hook) => !hook.deleted && repoKey(...(hook.repository.split('/') as [string, string])) === key).map((hook) => hookResource(hook, fake.url)));
      return;
    }
    if (hookIdText !== undefined && (method === 'GET' || method === 'DELETE')) {
      const hook = /^\d+$/.test(hookIdText) ? hooks.get(Number(hookIdText)) : undefined;
      if (hook === undefined || hook.deleted || repoKey(...(hook.repository.split('/') as [string, string])) !== key) {
        error(404, 'Not Found', `${HOOKS_DOCS}#${method === 'GET' ? 'get-a-repository-webhook' : 'delete-a-repository-webhook'}`);
        return;
      }
      if (method === 'GET') {
        send(200, hookResource(hook, fake.url));
        return;
      }
      if (permission !== 'admin') {
        error(403, 'Resource not accessible by personal access token', `${HOOKS_DOCS}#delete-a-repository-webhook`);
        return;
      }
      hook.deleted = true;
      send(204, undefined);
      // A hook subscribed to `meta` (or `*`) is told of its own deletion ("Webhook events and payloads", meta).
      if (hook.active && (hook.events.includes('meta') || hook.events.includes('*'))) {
        track(
          new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
            sendDelivery(hook, 'meta', { action: 'deleted', hook_id: hook.id, hook: hookResource(hook, fake.url), repository: repositoryPayload(hook.repository), sender: SENDER }),
          ),
        );
      }
      return;
    }
    if (hookIdText !== undefined || method !== 'POST') {
      error(404, 'Not Found');
      return;
    }

    // POST /repos/{owner}/{repo}/hooks
    const createDocs = `${HOOKS_DOCS}#create-a-repository-webhook`;
    if (permission !== 'admin') {
      error(403, 'Resource not accessible by personal access token', createDocs);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw) as unknown;
    } catch {
      error(400, 'Problems parsing JSON', createDocs);
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      error(400, 'Body should be a JSON object', createDocs);
      return;
    }
    const input = body as Record<string, unknown>;
    const invalid = invalidCreateParameter(input);
    if (invalid !== null) {
      error(422, `Invalid request.\n\n${invalid}`, createDocs);
      return;
    }
    const config = input.config as Record<string, unknown>;
    const events = (input.events as string[] | undefined) ?? ['push'];
    const validation = (message: string) => error(422, 'Validation Failed', createDocs, { errors: [{ resource: 'Hook', code: 'custom', message }] });
    if (typeof config.url !== 'string' || config.url === '') {
      validation('Config must contain URL for webhooks');
      return;
    }
    const unknown = events.filter((event) => !KNOWN_EVENTS.has(event));
    if (unknown.length > 0) {
      validation(`Hook events are not supported: ${unknown.join(', ')}`);
      return;
    }
    const duplicate = [...hooks.values()].some(
      (hook) => !hook.deleted && repoKey(...(hook.repository.split('/') as [string, string])) === key && hook.config.url === config.url && hook.events.some((event) => events.includes(event)),
    );
    if (duplicate) {
      validation('Hook already exists on this repository');
      return;
    }
    nextHookId += 1;
    const hook: FakeHook = {
      id: nextHookId,
      repository: `${decodeURIComponent(route[1]!)}/${decodeURIComponent(route[2]!)}`,
      name: 'web',
      active: input.active === undefined ? true : input.active === true,
      events,
      config: {
        url: config.url,
        content_type: typeof config.content_type === 'string' ? config.content_type : 'form',
        ...(typeof config.secret === 'string' && config.secret !== '' ? { secret: config.secret } : {}),
        insecure_ssl: String(config.insecure_ssl ?? '0'),
      },
      createdAt: new Date().toISOString(),
      deleted: false,
    };
    hooks.set(hook.id, hook);
    send(201, hookResource(hook, fake.url), { location: `${fake.url}/repos/${hook.repository}/hooks/${hook.id}` });
    if (hook.active) {
      // GitHub pings a new hook once it exists, on its own time: after the 201 is on its way.
      const ping = new Promise<void>((resolve) => setTimeout(resolve, options.pingDelayMs ?? 0)).then(() =>
        deliver(hook.id, 'ping', { zen: 'Keep it logically awesome.', hook_id: hook.id, hook: hookResource(hook, fake.url), repository: repositoryPayload(hook.repository), sender: SENDER }),
      );
      pings.set(hook.id, ping);
      track(ping);
    }
  };

  const track = (promise: Promise<unknown>) => {
    const settled = promise.catch(() => undefined).finally(() => pending.delete(settled));
    pending.add(settled);
  };

  const server: Server = createServer({ key: options.key, cert: options.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: GithubFake = {
    url: `https://127.0.0.1:${port}`,
    requests,
    deliveries,
    grant(token, repository, level = 'admin') {
      const [owner, repo] = repository.split('/') as [string, string];
      const grants = access.get(token) ?? new Map<string, 'admin' | 'read'>();
      grants.set(repoKey(owner, repo), level);
      access.set(token, grants);
    },
    hooksOf: (repository) => [...hooks.values()].filter((hook) => !hook.deleted && hook.repository.toLowerCase() === repository.toLowerCase()),
    hook: (id) => hooks.get(id),
    forget(id) {
      const hook = hooks.get(id);
      if (hook !== undefined) hook.deleted = true;
    },
    rateLimitNext(kind, times = 1, waitSeconds = 60) {
      for (let i = 0; i < times; i += 1) refusals.push({ kind, wait: waitSeconds });
    },
    failNext(status, times = 1) {
      for (let i = 0; i < times; i += 1) refusals.push({ status });
    },
    deliver(hookId, event, payload, opts) {
      const delivery = deliver(hookId, event, payload, opts);
      track(delivery);
      return delivery;
    },
    pinged(hookId) {
      const ping = pings.get(hookId);
      return ping ?? Promise.reject(new Error(`hook ${hookId} was never pinged`));
    },
    async close() {
      await Promise.all([...pending]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/** A parameter of the wrong type, in the words of GitHub's schema check ("Invalid request"), or null. */
function invalidCreateParameter(input: Record<string, unknown>): string | null {
  if (input.name !== undefined && input.name !== 'web') return `For 'properties/name', ${JSON.stringify(input.name)} is not one of ["web"].`;
  if (typeof input.config !== 'object' || input.config === null || Array.isArray(input.config)) return `"config" wasn't supplied.`;
  if (input.events !== undefined && (!Array.isArray(input.events) || input.events.some((event) => typeof event !== 'string'))) {
    return `For 'properties/events', ${JSON.stringify(input.events)} is not an array of strings.`;
  }
  if (input.active !== undefined && typeof input.active !== 'boolean') return `For 'properties/active', ${JSON.stringify(input.active)} is not a boolean.`;
  const config = input.config as Record<string, unknown>;
  if (config.content_type !== undefined && config.content_type !== 'json' && config.content_type !== 'form') {
    return `For 'properties/content_type', ${JSON.stringify(config.content_type)} is not one of ["json", "form"].`;
  }
  return null;
}

const SENDER = { login: 'octocat', id: 1, type: 'User' };

function repositoryPayload(repository: string): Record<string, unknown> {
  const [owner, name] = repository.split('/') as [string, string];
  return { id: 1296269, name, full_name: repository, private: false, owner: { login: owner, id: 1, type: 'User' } };
}

/** A hook as GitHub shows it: the secret masked, never given back. */
function hookResource(hook: FakeHook, base: string): Record<string, unknown> {
  const url = `${base}/repos/${hook.repository}/hooks/${hook.id}`;
  const { secret, ...config } = hook.config;
  return {
    type: 'Repository',
    id: hook.id,
    name: hook.name,
    active: hook.active,
    events: hook.events,
    config: { ...config, ...(secret !== undefined ? { secret: '********' } : {}) },
    updated_at: hook.createdAt,
    created_at: hook.createdAt,
    url,
    test_url: `${url}/test`,
    ping_url: `${url}/pings`,
    deliveries_url: `${url}/deliveries`,
    last_response: { code: null, status: 'unused', message: null },
  };
}

/** POSTs a delivery like Hookshot: no redirects followed, the answer read in full. */
function post(target: string, headers: Record<string, string>, body: string, ca: string | undefined): Promise<{ status: number; body: string }> {
  const url = new URL(target);
  const isHttps = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const request = (isHttps ? https : http).request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, ...(isHttps && ca !== undefined ? { ca } : {}) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.setTimeout(10_000, () => request.destroy(new Error('delivery timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

/** A token as GitHub issues them (fine-grained personal access token shape). */
export function githubToken(): string {
  return `github_pat_${randomBytes(30).toString('base64url')}`;
}
