import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  EnrollmentPolicy,
  EVENT_TYPES,
  OnErrorPolicy,
  ProjectType,
  timestampDate,
  unpackPayloadAs,
  type Envelope,
} from '@runline/contracts';
import { Inbox } from '@runline/db';

type Sql = (query: string, parameters: unknown[]) => Promise<unknown>;

/**
 * The invocation service's own copies of what it needs from the gateway: organization plans
 * (quotas), project settings (master switch, default policies and callback), published
 * definitions, and which projects are deleted, with the project's config_version.
 *
 * Events arrive twice: handed over by the gateway before it answers the change (request/reply)
 * and again from JetStream. Each is applied once (inbox, keyed by event id) and never lets an
 * older state overwrite a newer one, whatever order they come in: settings by the version that
 * wrote them, definitions by published version, plans by plan version, `config_version` only
 * grows and `deleted` never flips back.
 */
@Injectable()
export class GatewayCopies {
  constructor(private readonly dataSource: DataSource) {}

  /** Applies a gateway event; returns the project's config_version it carried (0 for none). */
  async apply(envelope: Envelope): Promise<number> {
    switch (envelope.type) {
      case EVENT_TYPES.ORGANIZATION_CREATED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.ORGANIZATION_CREATED);
        await this.once('organization-created', envelope, (sql) =>
          sql(`INSERT INTO organization_copies (org_id, name) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET name = EXCLUDED.name`, [
            event.orgId,
            event.name,
          ]),
        );
        return 0;
      }
      case EVENT_TYPES.ORGANIZATION_PLAN_CHANGED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.ORGANIZATION_PLAN_CHANGED);
        await this.once('organization-plan-changed', envelope, (sql) =>
          sql(
            `INSERT INTO organization_copies AS o (org_id, monthly_quota, rate_limit_per_minute, rate_limit_window_ms, renewal_day, plan_changed_at, plan_version)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (org_id) DO UPDATE SET
               monthly_quota = EXCLUDED.monthly_quota, rate_limit_per_minute = EXCLUDED.rate_limit_per_minute,
               rate_limit_window_ms = EXCLUDED.rate_limit_window_ms, renewal_day = EXCLUDED.renewal_day,
               plan_changed_at = EXCLUDED.plan_changed_at, plan_version = EXCLUDED.plan_version
             WHERE o.plan_version < EXCLUDED.plan_version
                OR (EXCLUDED.plan_version = 0 AND o.plan_version = 0 AND (o.plan_changed_at IS NULL OR o.plan_changed_at <= EXCLUDED.plan_changed_at))`,
            [
              event.orgId,
              optionalNumber(event.monthlyQuota),
              event.rateLimitPerMinute ?? null,
              optionalNumber(event.rateLimitWindowMs),
              event.renewalDay ?? null,
              occurredAt(envelope),
              Number(event.planVersion),
            ],
          ),
        );
        return 0;
      }
      case EVENT_TYPES.PROJECT_CREATED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_CREATED);
        const version = Number(event.configVersion);
        await this.once('project-created', envelope, (sql) =>
          sql(
            `INSERT INTO project_copies AS p (project_id, org_id, name, type, config_version) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (project_id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type,
               config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
            [event.projectId, event.orgId, event.name, event.type === ProjectType.CHATBOT ? 'CHATBOT' : 'AUTOMATION', version],
          ),
        );
        return version;
      }
      case EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED);
        const version = Number(event.configVersion);
        await this.once('project-api-settings-changed', envelope, (sql) =>
          sql(
            `INSERT INTO project_copies AS p (project_id, org_id, external_api_enabled, default_enrollment_policy,
               default_on_error_policy, default_callback_url, default_callback_secret_sealed, settings_changed_at,
               settings_version, config_version, max_concurrent_runs)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)
             ON CONFLICT (project_id) DO UPDATE SET
               external_api_enabled = EXCLUDED.external_api_enabled,
               default_enrollment_policy = EXCLUDED.default_enrollment_policy,
               default_on_error_policy = EXCLUDED.default_on_error_policy,
               default_callback_url = EXCLUDED.default_callback_url,
               default_callback_secret_sealed = EXCLUDED.default_callback_secret_sealed,
               settings_changed_at = EXCLUDED.settings_changed_at,
               max_concurrent_runs = EXCLUDED.max_concurrent_runs,
               settings_version = EXCLUDED.settings_version,
               config_version = GREATEST(p.config_version, EXCLUDED.config_version)
             WHERE p.settings_version < EXCLUDED.settings_version
                OR (EXCLUDED.settings_version = 0 AND p.settings_version = 0
                    AND (p.settings_changed_at IS NULL OR p.settings_changed_at <= EXCLUDED.settings_changed_at))`,
            [
              event.projectId,
              event.orgId,
              event.externalApiEnabled,
              event.defaultEnrollmentPolicy === EnrollmentPolicy.EVERY_MATCH ? 'EVERY_MATCH' : 'ONE_TIME',
              event.defaultOnErrorPolicy === OnErrorPolicy.CONTINUE ? 'CONTINUE' : 'ABORT',
              event.defaultCallbackUrl ?? null,
              event.defaultCallbackSecret ?? null,
              occurredAt(envelope),
              version,
              event.maxConcurrentRuns ?? null,
            ],
          ),
        );
        return version;
      }
      case EVENT_TYPES.DEFINITION_PUBLISHED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.DEFINITION_PUBLISHED);
        const version = Number(event.configVersion);
        await this.once('definition-published', envelope, async (sql) => {
          await sql(
            `INSERT INTO project_copies AS p (project_id, org_id, published_version, published_definition, config_version)
             VALUES ($1, $2, $3, $4::json, $5)
             ON CONFLICT (project_id) DO UPDATE SET
               published_version = EXCLUDED.published_version, published_definition = EXCLUDED.published_definition
             WHERE p.published_version < EXCLUDED.published_version`,
            [event.projectId, event.orgId, event.version, event.definitionJson, version],
          );
          await raiseConfigVersion(sql, event.projectId, version);
        });
        return version;
      }
      case EVENT_TYPES.API_TOKEN_REVOKED: {
        // Tokens are the gateway's alone; the revocation only moves the project's version on.
        const event = unpackPayloadAs(envelope, EVENT_TYPES.API_TOKEN_REVOKED);
        const version = Number(event.configVersion);
        await this.once('api-token-revoked', envelope, (sql) => raiseConfigVersion(sql, event.projectId, version));
        return version;
      }
      case EVENT_TYPES.INBOUND_HOOK_REVOKED: {
        // Hooks are the webhook service's, copied by the gateway alone: only the version moves on.
        const event = unpackPayloadAs(envelope, EVENT_TYPES.INBOUND_HOOK_REVOKED);
        const version = Number(event.configVersion);
        await this.once('inbound-hook-revoked', envelope, (sql) => raiseConfigVersion(sql, event.projectId, version));
        return version;
      }
      case EVENT_TYPES.PROJECT_DELETED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_DELETED);
        const version = Number(event.configVersion);
        await this.once('project-deleted', envelope, (sql) =>
          sql(
            `INSERT INTO project_copies AS p (project_id, org_id, deleted, config_version) VALUES ($1, $2, true, $3)
             ON CONFLICT (project_id) DO UPDATE SET deleted = true, config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
            [event.projectId, event.orgId, version],
          ),
        );
        return version;
      }
      default:
        throw new Error(`the invocation service keeps no copy of ${envelope.type}`);
    }
  }

  private once(consumer: string, envelope: Envelope, apply: (sql: Sql) => Promise<unknown>) {
    return Inbox.handleOnce(this.dataSource, `invocation.${consumer}`, envelope.id, ({ manager }) =>
      apply((query, parameters) => manager.query(query, parameters)),
    );
  }
}

function raiseConfigVersion(sql: Sql, projectId: string, version: number) {
  return sql('UPDATE project_copies SET config_version = GREATEST(config_version, $2) WHERE project_id = $1', [projectId, version]);
}

function occurredAt(envelope: Envelope): Date {
  if (!envelope.occurredAt) throw new Error(`envelope ${envelope.id} has no occurredAt`);
  return timestampDate(envelope.occurredAt);
}

function optionalNumber(value: bigint | undefined): number | null {
  return value === undefined ? null : Number(value);
}
