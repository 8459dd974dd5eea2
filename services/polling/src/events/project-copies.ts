import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EVENT_TYPES, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { Inbox, TransactionRunner } from '@runline/db';
import { deleteProjectTriggers } from '../polling/polling-triggers.repository.js';
import { applySettings, markDeleted, raiseVersion } from './project-copies.repository.js';

/**
 * The polling service's copy of each project's master switch, deletion and configuration
 * version. Events arrive twice (handed over by the gateway before it answers the change, then
 * from JetStream): each applies once (inbox), settings only over older settings, the version
 * only grows, and a deletion is for good: it also removes the project's triggers.
 */
@Injectable()
export class ProjectCopies {
  constructor(private readonly transactions: TransactionRunner) {}

  /** Applies a gateway event; returns the project's config_version it carried (0 for none). */
  async apply(envelope: Envelope): Promise<number> {
    switch (envelope.type) {
      case EVENT_TYPES.PROJECT_CREATED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_CREATED);
        return this.once('project-created', envelope, Number(event.configVersion), (manager, version) =>
          raiseVersion(manager, event.projectId, event.orgId, version),
        );
      }
      case EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED);
        return this.once('project-api-settings-changed', envelope, Number(event.configVersion), (manager, version) =>
          applySettings(manager, event.projectId, event.orgId, event.externalApiEnabled, version),
        );
      }
      case EVENT_TYPES.DEFINITION_PUBLISHED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.DEFINITION_PUBLISHED);
        return this.once('definition-published', envelope, Number(event.configVersion), (manager, version) =>
          raiseVersion(manager, event.projectId, event.orgId, version),
        );
      }
      case EVENT_TYPES.API_TOKEN_REVOKED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.API_TOKEN_REVOKED);
        return this.once('api-token-revoked', envelope, Number(event.configVersion), (manager, version) =>
          raiseVersion(manager, event.projectId, event.orgId, version),
        );
      }
      case EVENT_TYPES.INBOUND_HOOK_REVOKED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.INBOUND_HOOK_REVOKED);
        return this.once('inbound-hook-revoked', envelope, Number(event.configVersion), (manager, version) =>
          raiseVersion(manager, event.projectId, event.orgId, version),
        );
      }
      case EVENT_TYPES.PROJECT_DELETED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_DELETED);
        return this.once('project-deleted', envelope, Number(event.configVersion), async (manager, version) => {
          await markDeleted(manager, event.projectId, event.orgId, version);
          await deleteProjectTriggers(manager, event.projectId);
        });
      }
      default:
        // Organizations and plans: nothing the poller keeps.
        return 0;
    }
  }

  private async once(consumer: string, envelope: Envelope, version: number, apply: (manager: EntityManager, version: number) => Promise<unknown>): Promise<number> {
    await Inbox.handleOnce(this.transactions, `polling.${consumer}`, envelope.id, ({ manager }) => apply(manager, version));
    return version;
  }
}
