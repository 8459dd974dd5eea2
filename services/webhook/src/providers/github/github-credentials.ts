import { randomBytes } from 'node:crypto';

/**
 * What a user gives for a GitHub subscription (DESIGN section 9): a token that may manage the
 * repository's webhooks, the repository as `owner/repo`, and optionally the hook secret to use.
 */
export interface GithubCredentials {
  token: string;
  /** `owner/repo`, as given. */
  repository: string;
  /** The secret GitHub signs deliveries with; one is generated at creation when not given. */
  webhookSecret?: string;
}

/**
 * Owner: a GitHub login (letters, digits and single inner hyphens, at most 39 characters).
 * Repository name: letters, digits, `.`, `-` and `_`, at most 100 characters ("Creating a new
 * repository", https://docs.github.com/en/repositories/creating-and-managing-repositories/creating-a-new-repository).
 */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
/** A token goes into a header: printable ASCII without spaces. */
const TOKEN = /^[\x21-\x7e]{1,1000}$/;
/** As for inbound hook secrets (webhook-bodies.dto.ts): 16 to 256 characters. */
const MIN_SECRET = 16;
const MAX_SECRET = 256;

const CREDENTIALS_ERROR = 'credentials must be {token, repository: "owner/repo", webhookSecret?}';

export function parseGithubCredentials(input: unknown): { ok: true; credentials: GithubCredentials } | { ok: false; error: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, error: CREDENTIALS_ERROR };
  const { token, repository, webhookSecret, ...rest } = input as Record<string, unknown>;
  const unknownKey = Object.keys(rest)[0];
  if (unknownKey !== undefined) return { ok: false, error: `credentials.${unknownKey} is not a GitHub credential` };
  if (typeof token !== 'string' || !TOKEN.test(token)) return { ok: false, error: 'credentials.token must be a GitHub token' };
  if (typeof repository !== 'string' || splitRepository(repository) === null) {
    return { ok: false, error: 'credentials.repository must be "owner/repo"' };
  }
  if (webhookSecret !== undefined) {
    if (typeof webhookSecret !== 'string' || webhookSecret.length < MIN_SECRET || webhookSecret.length > MAX_SECRET) {
      return { ok: false, error: `credentials.webhookSecret must be ${MIN_SECRET} to ${MAX_SECRET} characters` };
    }
    return { ok: true, credentials: { token, repository, webhookSecret } };
  }
  return { ok: true, credentials: { token, repository } };
}

/** `owner/repo` split in two, or null when it is not one. `.` and `..` are not repositories (they would change the path). */
export function splitRepository(repository: string): { owner: string; repo: string } | null {
  const parts = repository.split('/');
  if (parts.length !== 2) return null;
  const [owner, repo] = parts as [string, string];
  if (!OWNER.test(owner) || !REPO.test(repo) || repo === '.' || repo === '..') return null;
  return { owner, repo };
}

/**
 * A hook secret when the user gave none: 32 random bytes. GitHub asks for "a random string of
 * text with high entropy" ("Validating webhook deliveries", Creating a secret token,
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
 */
export function generateGithubWebhookSecret(): string {
  return randomBytes(32).toString('hex');
}
