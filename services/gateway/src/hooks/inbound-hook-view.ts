import { timestampDate, type InboundHook } from '@runline/contracts';

/** A hook as the console shows it (never its secret). */
export function inboundHookView(hook: InboundHook, baseUrl: string) {
  return {
    id: hook.id,
    name: hook.name,
    url: `${baseUrl}/v1/hooks/${hook.id}`,
    status: hook.status,
    rateLimitPerMinute: hook.rateLimitPerMinute,
    createdAt: hook.createdAt ? timestampDate(hook.createdAt).toISOString() : null,
  };
}
