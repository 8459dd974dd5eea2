import type { OutboundResponse } from '@runline/outbound';
import { ProviderError } from '../provider-adapter.js';
import { GithubAdapter } from './github.adapter.js';
import { githubError } from './github-rest-api.js';

const adapter = new GithubAdapter();
const response = (status: number, body: unknown, headers: Record<string, string> = {}): OutboundResponse => ({
  status,
  headers,
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

describe('GithubAdapter: credentials', () => {
  it('takes {token, repository: "owner/repo", webhookSecret?}', () => {
    expect(adapter.parseCredentials({ token: 'ghp_abc', repository: 'octo-org/hello.world_1' })).toEqual({ ok: true, credentials: { token: 'ghp_abc', repository: 'octo-org/hello.world_1' } });
    const secret = 's'.repeat(16);
    expect(adapter.parseCredentials({ token: 'ghp_abc', repository: 'o/r', webhookSecret: secret })).toEqual({ ok: true, credentials: { token: 'ghp_abc', repository: 'o/r', webhookSecret: secret } });
  });

  it('says what is wrong with anything else', () => {
    const cases: Array<[unknown, string]> = [
      [null, 'credentials must be {token, repository: "owner/repo", webhookSecret?}'],
      [[], 'credentials must be {token, repository: "owner/repo", webhookSecret?}'],
      [{ repository: 'o/r' }, 'credentials.token must be a GitHub token'],
      [{ token: 'has space', repository: 'o/r' }, 'credentials.token must be a GitHub token'],
      [{ token: 't\r\nx: y', repository: 'o/r' }, 'credentials.token must be a GitHub token'],
      [{ token: 't' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: 'just-a-name' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: 'o/r/hooks' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: 'o/..' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: '-o/r' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: 'o--x/r' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: 'o/r?x=1' }, 'credentials.repository must be "owner/repo"'],
      [{ token: 't', repository: 'o/r', webhookSecret: 'short' }, 'credentials.webhookSecret must be 16 to 256 characters'],
      [{ token: 't', repository: 'o/r', webhookSecret: 'x'.repeat(257) }, 'credentials.webhookSecret must be 16 to 256 characters'],
      [{ token: 't', repository: 'o/r', webhookSecret: 42 }, 'credentials.webhookSecret must be 16 to 256 characters'],
      [{ token: 't', repository: 'o/r', secretKey: 'sk_x' }, 'credentials.secretKey is not a GitHub credential'],
    ];
    for (const [input, error] of cases) expect(adapter.parseCredentials(input)).toEqual({ ok: false, error });
  });
});

describe('GithubAdapter: events', () => {
  it('takes GitHub’s repository event names and the wildcard *', () => {
    expect(adapter.checkEvents(['push', 'pull_request', 'issues', 'workflow_run'])).toEqual({ ok: true });
    expect(adapter.checkEvents(['*'])).toEqual({ ok: true });
  });

  it('names the first event that is not one, and refuses ping and an empty list', () => {
    expect(adapter.checkEvents(['push', 'pushh'])).toEqual({ ok: false, error: '"pushh" is not a GitHub repository webhook event' });
    expect(adapter.checkEvents(['ping'])).toEqual({ ok: false, error: '"ping" is not a GitHub repository webhook event' });
    expect(adapter.checkEvents(['Push'])).toEqual({ ok: false, error: '"Push" is not a GitHub repository webhook event' });
    expect(adapter.checkEvents(['orders/create'])).toEqual({ ok: false, error: '"orders/create" is not a GitHub repository webhook event' });
    expect(adapter.checkEvents([])).toEqual({ ok: false, error: 'events must name at least one GitHub event' });
  });

  it('runs subscribed events (by name or through *), ignores ping, meta through *, others and a missing name', () => {
    expect(adapter.classify('push', ['push', 'issues'])).toBe('run');
    expect(adapter.classify('issues', ['*'])).toBe('run');
    expect(adapter.classify('ping', ['*'])).toBe('ignore');
    expect(adapter.classify('ping', ['push'])).toBe('ignore');
    expect(adapter.classify('release', ['push'])).toBe('ignore');
    expect(adapter.classify(null, ['*'])).toBe('ignore');
    // meta (the hook's own deletion notice) only by name, not through *.
    expect(adapter.classify('meta', ['*'])).toBe('ignore');
    expect(adapter.classify('meta', ['meta'])).toBe('run');
  });
});

describe('GitHub errors', () => {
  const NOW = Date.UTC(2030, 0, 1);

  it('keeps GitHub’s message; 401, 404, 422 and a permission 403 are not retried', () => {
    expect(githubError(response(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }))).toEqual(new ProviderError('Bad credentials', false, 401));
    const notFound = githubError(response(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' }));
    expect([notFound.message, notFound.retryable, notFound.status]).toEqual(['Not Found', false, 404]);
    const forbidden = githubError(response(403, { message: 'Resource not accessible by personal access token', documentation_url: 'x' }, { 'x-ratelimit-remaining': '4999' }));
    expect([forbidden.message, forbidden.retryable]).toEqual(['Resource not accessible by personal access token', false]);
  });

  it('adds a 422’s errors to its message', () => {
    const duplicate = githubError(response(422, { message: 'Validation Failed', errors: [{ resource: 'Hook', code: 'custom', message: 'Hook already exists on this repository' }], documentation_url: 'x' }));
    expect([duplicate.message, duplicate.retryable, duplicate.status]).toEqual(['Validation Failed: Hook already exists on this repository', false, 422]);
    const fields = githubError(response(422, { message: 'Validation Failed', errors: [{ resource: 'Hook', field: 'config', code: 'missing_field' }, 'plain'] }));
    expect(fields.message).toBe('Validation Failed: Hook config missing_field; plain');
    expect(githubError(response(422, { message: 'Invalid request.\n\nFor \'properties/events\', "push" is not an array.' })).message).toBe('Invalid request.\n\nFor \'properties/events\', "push" is not an array.');
  });

  it('retries rate limits with the wait GitHub asks for', () => {
    const primary = githubError(response(403, { message: 'API rate limit exceeded for user ID 1.' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 90) }), NOW);
    expect([primary.message, primary.retryable, primary.status, primary.retryAfterMs]).toEqual(['API rate limit exceeded for user ID 1.', true, 403, 90_000]);
    const secondary = githubError(response(403, { message: 'You have exceeded a secondary rate limit.' }, { 'retry-after': '30' }), NOW);
    expect([secondary.retryable, secondary.retryAfterMs]).toEqual([true, 30_000]);
    const bare = githubError(response(403, { message: 'You have exceeded a secondary rate limit.' }), NOW);
    expect([bare.retryable, bare.retryAfterMs]).toEqual([true, 60_000]);
    const tooMany = githubError(response(429, { message: 'Too many' }, { 'retry-after': '5' }), NOW);
    expect([tooMany.retryable, tooMany.status, tooMany.retryAfterMs]).toEqual([true, 429, 5000]);
    const pastReset = githubError(response(429, {}, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 - 5) }), NOW);
    expect([pastReset.message, pastReset.retryAfterMs]).toEqual(['GitHub answered 429', 0]);
  });

  it('retries 5xx, whatever the body', () => {
    const html = githubError(response(502, '<html>Bad gateway</html>'));
    expect([html.message, html.retryable, html.status, html.retryAfterMs]).toEqual(['GitHub answered 502', true, 502, null]);
    const json = githubError(response(500, { message: 'Server Error' }, { 'retry-after': '2' }));
    expect([json.message, json.retryable, json.retryAfterMs]).toEqual(['Server Error', true, 2000]);
  });
});
