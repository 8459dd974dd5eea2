/**
 * The events a repository webhook can subscribe to, by GitHub's own names ("Webhook events and
 * payloads", https://docs.github.com/en/webhooks/webhook-events-and-payloads, the events whose
 * availability includes "Repositories"; cross-checked with the payload schemas of
 * octokit/webhooks). `*` is GitHub's wildcard: all current and future events ("Webhooks",
 * Events: "`*` Any time any event is triggered (Wildcard Event)").
 *
 * `ping` is not among them: GitHub sends it by itself when a hook is created, it cannot be
 * subscribed to, and it starts no run. Events only organizations, GitHub Apps, Marketplace or
 * Sponsors listings receive (`organization`, `installation`, `sponsorship`, …) are left out.
 */
export const GITHUB_WILDCARD_EVENT = '*';
export const GITHUB_PING_EVENT = 'ping';

export const GITHUB_REPOSITORY_EVENTS: ReadonlySet<string> = new Set([
  'branch_protection_configuration',
  'branch_protection_rule',
  'check_run',
  'check_suite',
  'code_scanning_alert',
  'commit_comment',
  'create',
  'custom_property_values',
  'delete',
  'dependabot_alert',
  'deploy_key',
  'deployment',
  'deployment_protection_rule',
  'deployment_review',
  'deployment_status',
  'discussion',
  'discussion_comment',
  'fork',
  'gollum',
  'issue_comment',
  'issues',
  'label',
  'member',
  'merge_group',
  'meta',
  'milestone',
  'package',
  'page_build',
  'project',
  'project_card',
  'project_column',
  'public',
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'pull_request_review_thread',
  'push',
  'registry_package',
  'release',
  'repository',
  'repository_advisory',
  'repository_dispatch',
  'repository_import',
  'repository_ruleset',
  'repository_vulnerability_alert',
  'secret_scanning_alert',
  'secret_scanning_alert_location',
  'secret_scanning_scan',
  'security_and_analysis',
  'star',
  'status',
  'sub_issues',
  'team_add',
  'watch',
  'workflow_dispatch',
  'workflow_job',
  'workflow_run',
]);

export function checkGithubEvents(events: readonly string[]): { ok: true } | { ok: false; error: string } {
  if (events.length === 0) return { ok: false, error: 'events must name at least one GitHub event' };
  for (const event of events) {
    if (event !== GITHUB_WILDCARD_EVENT && !GITHUB_REPOSITORY_EVENTS.has(event)) {
      return { ok: false, error: `${JSON.stringify(event.slice(0, 100))} is not a GitHub repository webhook event` };
    }
  }
  return { ok: true };
}

/** Activity of the hook itself ("Webhook events and payloads", meta: sent when the hook is deleted). */
export const GITHUB_META_EVENT = 'meta';

/**
 * Whether a delivery starts a run: `ping` never does (housekeeping sent on creation); `meta` only
 * when subscribed to by name, since through `*` it would be the `deleted` notice our own revoke
 * makes GitHub send; any other event when subscribed to by name or through `*`. GitHub sends
 * only what the hook subscribes to, so this guards against a hook whose events were changed at
 * GitHub by hand.
 */
export function classifyGithubEvent(eventName: string | null, events: readonly string[]): 'run' | 'ignore' {
  if (eventName === null || eventName === GITHUB_PING_EVENT) return 'ignore';
  if (events.includes(eventName)) return 'run';
  return eventName !== GITHUB_META_EVENT && events.includes(GITHUB_WILDCARD_EVENT) ? 'run' : 'ignore';
}
