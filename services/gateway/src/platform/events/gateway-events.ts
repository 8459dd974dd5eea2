import {
  ApiTokenRevokedSchema,
  create,
  DefinitionPublishedSchema,
  EnrollmentPolicy,
  EVENT_TYPES,
  InboundHookRevokedSchema,
  newEnvelope,
  OnErrorPolicy,
  OrganizationCreatedSchema,
  OrganizationPlanChangedSchema,
  ProjectApiSettingsChangedSchema,
  ProjectCreatedSchema,
  ProjectDeletedSchema,
  ProjectType,
  toBusMessage,
} from '@runline/contracts';
import type { BusMessage } from '@runline/bus';
import type { OrganizationEntity } from '../store/organization.entity.js';
import type { ProjectApiSettingsEntity } from '../store/project-api-settings.entity.js';
import type { ProjectEntity } from '../store/project.entity.js';

/**
 * The gateway's events, built from its entities. Other services keep their own copies of
 * organizations' plans, project settings and published definitions from these.
 */
export const gatewayEvents = {
  organizationCreated(org: Pick<OrganizationEntity, 'id' | 'name'>): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.ORGANIZATION_CREATED,
        payload: create(OrganizationCreatedSchema, { orgId: org.id, name: org.name }),
        orgId: org.id,
      }),
    );
  },

  organizationPlanChanged(org: OrganizationEntity): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.ORGANIZATION_PLAN_CHANGED,
        payload: create(OrganizationPlanChangedSchema, {
          orgId: org.id,
          monthlyQuota: optionalBigInt(org.monthlyQuota),
          rateLimitPerMinute: org.rateLimitPerMinute ?? undefined,
          rateLimitWindowMs: optionalBigInt(org.rateLimitWindowMs),
          renewalDay: org.renewalDay ?? undefined,
          planVersion: BigInt(org.planVersion),
        }),
        orgId: org.id,
      }),
    );
  },

  projectCreated(project: Pick<ProjectEntity, 'id' | 'orgId' | 'name' | 'type' | 'configVersion'>): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.PROJECT_CREATED,
        payload: create(ProjectCreatedSchema, {
          orgId: project.orgId,
          projectId: project.id,
          name: project.name,
          type: project.type === 'CHATBOT' ? ProjectType.CHATBOT : ProjectType.AUTOMATION,
          configVersion: BigInt(project.configVersion),
        }),
        orgId: project.orgId,
        projectId: project.id,
      }),
    );
  },

  /** The callback secret travels sealed (SecretBox); only holders of SECRETS_KEY can open it. */
  projectApiSettingsChanged(orgId: string, settings: ProjectApiSettingsEntity, configVersion: number): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED,
        payload: create(ProjectApiSettingsChangedSchema, {
          orgId,
          projectId: settings.projectId,
          externalApiEnabled: settings.externalApiEnabled,
          defaultEnrollmentPolicy:
            settings.defaultEnrollmentPolicy === 'ONE_TIME' ? EnrollmentPolicy.ONE_TIME : EnrollmentPolicy.EVERY_MATCH,
          defaultOnErrorPolicy: settings.defaultOnErrorPolicy === 'ABORT' ? OnErrorPolicy.ABORT : OnErrorPolicy.CONTINUE,
          defaultCallbackUrl: settings.defaultCallbackUrl ?? undefined,
          defaultCallbackSecret: settings.defaultCallbackSecretSealed ?? undefined,
          rateLimitPerMinute: settings.rateLimitPerMinute ?? undefined,
          rateLimitWindowMs: optionalBigInt(settings.rateLimitWindowMs),
          configVersion: BigInt(configVersion),
          maxConcurrentRuns: settings.maxConcurrentRuns ?? undefined,
        }),
        orgId,
        projectId: settings.projectId,
      }),
    );
  },

  definitionPublished(project: ProjectEntity): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.DEFINITION_PUBLISHED,
        payload: create(DefinitionPublishedSchema, {
          orgId: project.orgId,
          projectId: project.id,
          version: project.publishedVersion,
          definitionJson: JSON.stringify(project.publishedDefinition),
          configVersion: BigInt(project.configVersion),
        }),
        orgId: project.orgId,
        projectId: project.id,
      }),
    );
  },

  apiTokenRevoked(token: { id: string; orgId: string; projectId: string }, configVersion: number): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.API_TOKEN_REVOKED,
        payload: create(ApiTokenRevokedSchema, {
          orgId: token.orgId,
          projectId: token.projectId,
          tokenId: token.id,
          configVersion: BigInt(configVersion),
        }),
        orgId: token.orgId,
        projectId: token.projectId,
      }),
    );
  },

  /** The webhook service owns hooks; this event commits the project's new version for the revocation. */
  inboundHookRevoked(hook: { id: string; orgId: string; projectId: string }, configVersion: number): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.INBOUND_HOOK_REVOKED,
        payload: create(InboundHookRevokedSchema, { orgId: hook.orgId, projectId: hook.projectId, hookId: hook.id, configVersion: BigInt(configVersion) }),
        orgId: hook.orgId,
        projectId: hook.projectId,
      }),
    );
  },

  projectDeleted(project: Pick<ProjectEntity, 'id' | 'orgId' | 'configVersion'>): BusMessage {
    return toBusMessage(
      newEnvelope({
        type: EVENT_TYPES.PROJECT_DELETED,
        payload: create(ProjectDeletedSchema, { orgId: project.orgId, projectId: project.id, configVersion: BigInt(project.configVersion) }),
        orgId: project.orgId,
        projectId: project.id,
      }),
    );
  },
};

function optionalBigInt(value: number | null): bigint | undefined {
  return value === null ? undefined : BigInt(value);
}
