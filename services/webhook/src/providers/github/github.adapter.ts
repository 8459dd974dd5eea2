import { ProviderError, type CreatedProviderWebhook, type ProviderAdapter, type ProviderCallContext } from '../provider-adapter.js';
import { generateGithubWebhookSecret, parseGithubCredentials, splitRepository, type GithubCredentials } from './github-credentials.js';
import { checkGithubEvents, classifyGithubEvent } from './github-events.js';
import { callGithubApi } from './github-rest-api.js';
import { GithubSignatureScheme } from './github-signature.scheme.js';

/**
 * GitHub repository webhooks through the REST API ("REST API endpoints for repository
 * webhooks", https://docs.github.com/en/rest/webhooks/repos):
 * - Create: `POST /repos/{owner}/{repo}/hooks` with `{name: "web", active, events, config: {url,
 *   content_type, secret, insecure_ssl}}` → 201 with the hook, whose `id` is kept as the
 *   provider id. We always send `content_type: "json"` (the body is the event's JSON, which is
 *   what a run takes) and `insecure_ssl: "0"` (GitHub checks our certificate). GitHub never
 *   returns the secret, so the one we send (the user's, or a generated one) is the signing secret.
 * - Delete: `DELETE /repos/{owner}/{repo}/hooks/{hook_id}` → 204; 404 means it is already gone.
 * Right after creating a hook GitHub sends it a `ping` event ("Webhook events and payloads",
 * ping), which `classify` ignores.
 */
export class GithubAdapter implements ProviderAdapter<GithubCredentials> {
  readonly provider = 'github' as const;
  readonly scheme = new GithubSignatureScheme();

  parseCredentials(input: unknown) {
    return parseGithubCredentials(input);
  }

  checkEvents(events: readonly string[]) {
    return checkGithubEvents(events);
  }

  classify(eventName: string | null, events: readonly string[]): 'run' | 'ignore' {
    return classifyGithubEvent(eventName, events);
  }

  async create(credentials: GithubCredentials, endpoint: string, events: readonly string[], context: ProviderCallContext): Promise<CreatedProviderWebhook> {
    const secret = credentials.webhookSecret ?? generateGithubWebhookSecret();
    const response = await callGithubApi(
      {
        method: 'POST',
        path: `${repositoryPath(credentials)}/hooks`,
        token: credentials.token,
        body: { name: 'web', active: true, events: [...events], config: { url: endpoint, content_type: 'json', secret, insecure_ssl: '0' } },
      },
      context,
    );
    const id = hookIdOf(response.body);
    if (id === null) throw new ProviderError('GitHub answered without a hook id', false, response.status);
    return { providerId: id, signingSecret: secret };
  }

  async remove(credentials: GithubCredentials, providerId: string, context: ProviderCallContext): Promise<'removed' | 'already-gone'> {
    // Our own id, but read back from storage: only a number goes into the path.
    if (!/^\d{1,20}$/.test(providerId)) throw new ProviderError(`${JSON.stringify(providerId.slice(0, 40))} is not a GitHub hook id`, false);
    const response = await callGithubApi(
      { method: 'DELETE', path: `${repositoryPath(credentials)}/hooks/${providerId}`, token: credentials.token },
      context,
      [404],
    );
    return response.status === 404 ? 'already-gone' : 'removed';
  }
}

/** `/repos/{owner}/{repo}`; the parts were checked by parseCredentials, and are encoded all the same. */
function repositoryPath(credentials: GithubCredentials): string {
  const parts = splitRepository(credentials.repository);
  if (parts === null) throw new ProviderError('credentials.repository must be "owner/repo"', false);
  return `/repos/${encodeURIComponent(parts.owner)}/${encodeURIComponent(parts.repo)}`;
}

/** The created hook's `id` (a number in GitHub's answers), as text. */
function hookIdOf(body: Buffer): string | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const id = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).id : undefined;
    if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return String(id);
    if (typeof id === 'string' && /^\d{1,20}$/.test(id)) return id;
    return null;
  } catch {
    return null;
  }
}
