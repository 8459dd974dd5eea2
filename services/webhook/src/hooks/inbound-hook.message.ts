import { create, InboundHookCopySchema, InboundHookSchema, timestampFromDate, type InboundHook, type InboundHookCopy } from '@runline/contracts';
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

/** A hook as the gateway keeps it to verify deliveries itself: its secret still sealed. */
export function inboundHookCopy(row: HookRow, timestampToleranceSeconds: number): InboundHookCopy {
  return create(InboundHookCopySchema, {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    sealedSecret: row.sealed_secret,
    status: row.status,
    rateLimitPerMinute: row.rate_limit_per_minute,
    timestampToleranceSeconds,
  });
}
