import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import {
  EnrollmentPolicy,
  EVENT_TYPES,
  GATEWAY_EVENT_SUBJECTS,
  OnErrorPolicy,
  ProjectType,
  timestampDate,
  unpackPayloadAs,
  type Envelope,
} from '@runline/contracts';
import { Inbox } from '@runline/db';

/**
 * Keeps the invocation service's own copies of what it needs from the gateway: organization
 * plans (quotas), project settings (master switch, default policies and callback) and
 * published definitions. Each event is applied once (inbox); an older event never overwrites
 * a newer one (occurredAt / version guards), so redelivery and reordering change nothing.
 */
@Controller()
export class GatewayCopiesProjector {
  constructor(private readonly dataSource: DataSource) {}

  @EventPattern(GATEWAY_EVENT_SUBJECTS.ORGANIZATION_CREATED)
  async organizationCreated(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.ORGANIZATION_CREATED);
    await this.once('organization-created', envelope, (sql) =>
      sql(`INSERT INTO organization_copies (org_id, name) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET name = EXCLUDED.name`, [
        event.orgId,
        event.name,
      ]),
    );
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.ORGANIZATION_PLAN_CHANGED)
  async organizationPlanChanged(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.ORGANIZATION_PLAN_CHANGED);
    await this.once('organization-plan-changed', envelope, (sql) =>
      sql(
        `INSERT INTO organization_copies AS o (org_id, monthly_quota, rate_limit_per_minute, rate_limit_window_ms, renewal_day, plan_changed_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (org_id) DO UPDATE SET
           monthly_quota = EXCLUDED.monthly_quota, rate_limit_per_minute = EXCLUDED.rate_limit_per_minute,
           rate_limit_window_ms = EXCLUDED.rate_limit_window_ms, renewal_day = EXCLUDED.renewal_day,
           plan_changed_at = EXCLUDED.plan_changed_at
         WHERE o.plan_changed_at IS NULL OR o.plan_changed_at <= EXCLUDED.plan_changed_at`,
        [
          event.orgId,
          optionalNumber(event.monthlyQuota),
          event.rateLimitPerMinute ?? null,
          optionalNumber(event.rateLimitWindowMs),
          event.renewalDay ?? null,
          occurredAt(envelope),
        ],
      ),
    );
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.PROJECT_CREATED)
  async projectCreated(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_CREATED);
    await this.once('project-created', envelope, (sql) =>
      sql(
        `INSERT INTO project_copies (project_id, org_id, name, type) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type`,
        [event.projectId, event.orgId, event.name, event.type === ProjectType.CHATBOT ? 'CHATBOT' : 'AUTOMATION'],
      ),
    );
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.PROJECT_API_SETTINGS_CHANGED)
  async projectApiSettingsChanged(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED);
    await this.once('project-api-settings-changed', envelope, (sql) =>
      sql(
        `INSERT INTO project_copies AS p (project_id, org_id, external_api_enabled, default_enrollment_policy,
           default_on_error_policy, default_callback_url, default_callback_secret_sealed, settings_changed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (project_id) DO UPDATE SET
           external_api_enabled = EXCLUDED.external_api_enabled,
           default_enrollment_policy = EXCLUDED.default_enrollment_policy,
           default_on_error_policy = EXCLUDED.default_on_error_policy,
           default_callback_url = EXCLUDED.default_callback_url,
           default_callback_secret_sealed = EXCLUDED.default_callback_secret_sealed,
           settings_changed_at = EXCLUDED.settings_changed_at
         WHERE p.settings_changed_at IS NULL OR p.settings_changed_at <= EXCLUDED.settings_changed_at`,
        [
          event.projectId,
          event.orgId,
          event.externalApiEnabled,
          event.defaultEnrollmentPolicy === EnrollmentPolicy.EVERY_MATCH ? 'EVERY_MATCH' : 'ONE_TIME',
          event.defaultOnErrorPolicy === OnErrorPolicy.CONTINUE ? 'CONTINUE' : 'ABORT',
          event.defaultCallbackUrl ?? null,
          event.defaultCallbackSecret ?? null,
          occurredAt(envelope),
        ],
      ),
    );
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.DEFINITION_PUBLISHED)
  async definitionPublished(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.DEFINITION_PUBLISHED);
    await this.once('definition-published', envelope, (sql) =>
      sql(
        `INSERT INTO project_copies AS p (project_id, org_id, published_version, published_definition)
         VALUES ($1, $2, $3, $4::json)
         ON CONFLICT (project_id) DO UPDATE SET
           published_version = EXCLUDED.published_version, published_definition = EXCLUDED.published_definition
         WHERE p.published_version < EXCLUDED.published_version`,
        [event.projectId, event.orgId, event.version, event.definitionJson],
      ),
    );
  }

  private once(consumer: string, envelope: Envelope, apply: (sql: (query: string, parameters: unknown[]) => Promise<unknown>) => Promise<unknown>) {
    return Inbox.handleOnce(this.dataSource, `invocation.${consumer}`, envelope.id, ({ manager }) =>
      apply((query, parameters) => manager.query(query, parameters)),
    );
  }
}

function occurredAt(envelope: Envelope): Date {
  if (!envelope.occurredAt) throw new Error(`envelope ${envelope.id} has no occurredAt`);
  return timestampDate(envelope.occurredAt);
}

function optionalNumber(value: bigint | undefined): number | null {
  return value === undefined ? null : Number(value);
}
