import { create, InboundHookSchema, timestampFromDate, type InboundHook } from '@runline/contracts';
import type { HookRow } from './inbound-hooks.repository.js';

/** A hook as it leaves this service: never its secret. */
export function inboundHookMessage(row: HookRow): InboundHook {
  return create(InboundHookSchema, {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    status: row.status,
    createdAt: timestampFromDate(new Date(row.created_at)),
    rateLimitPerMinute: row.rate_limit_per_minute,
  });
}
