import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EVENT_TYPES, timestampDate, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { Inbox, TransactionRunner } from '@runline/db';
import { planPublish, rawSchedulesOf } from './schedule-publish-plan.js';
import { ScheduleFirer } from './schedule-firer.js';
import { applyPublishPlan, deleteProjectSchedules, lockProject, lockProjectSchedules, raiseConfigVersion } from './schedule-rows.repository.js';

/**
 * The scheduler's copy of what the gateway publishes: each project's schedules (from
 * DefinitionPublished), their configuration version, and deletions. Events arrive twice (handed
 * over by the gateway before it answers the change, then from JetStream): each applies once
 * (inbox), a publish only over an older one, and a deletion is for good.
 *
 * A publish locks the project's schedule rows before it changes them, so it waits for a firing
 * pass that holds one of them: once it is applied (and the gateway answers the publish), no fire
 * of an older form of a schedule is still on its way (DESIGN section 8).
 */
@Injectable()
export class ScheduleCatalog {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: ScheduleFirer,
  ) {}

  /** Applies a gateway event; returns the project's configuration version it carried (0 for none). */
  async apply(envelope: Envelope): Promise<number> {
    const at = envelope.occurredAt ? timestampDate(envelope.occurredAt) : new Date();
    switch (envelope.type) {
      case EVENT_TYPES.DEFINITION_PUBLISHED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.DEFINITION_PUBLISHED);
        const version = Number(event.configVersion);
        const dueTimes: Date[] = [];
        await this.once('definition-published', envelope, async (manager) => {
          const project = await lockProject(manager, event.projectId, event.orgId, new Date());
          if (project.deleted || event.version <= project.publishedVersion) return;
          const stored = await lockProjectSchedules(manager, event.projectId);
          const plan = planPublish(event.projectId, rawSchedulesOf(parseDefinition(event.definitionJson)), stored, at);
          await applyPublishPlan(manager, { projectId: event.projectId, orgId: event.orgId, publishedVersion: event.version, configVersion: version }, plan, new Date());
          for (const entry of plan.upserts) if (!entry.unchanged && entry.dueAt) dueTimes.push(entry.dueAt);
        });
        for (const dueAt of dueTimes) this.firer.offer(dueAt);
        return version;
      }
      case EVENT_TYPES.PROJECT_DELETED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_DELETED);
        await this.once('project-deleted', envelope, async (manager) => {
          await lockProject(manager, event.projectId, event.orgId, new Date());
          await lockProjectSchedules(manager, event.projectId);
          await deleteProjectSchedules(manager, event.projectId, new Date());
        });
        return Number(event.configVersion);
      }
      case EVENT_TYPES.PROJECT_CREATED:
      case EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED:
      case EVENT_TYPES.API_TOKEN_REVOKED:
      case EVENT_TYPES.INBOUND_HOOK_REVOKED: {
        // Fires carry the project's latest configuration version, so the invocation service never
        // starts one on an older copy of the project than what was answered before it.
        const event = unpackPayloadAs(envelope, envelope.type);
        const version = Number(event.configVersion);
        await this.once('project-changed', envelope, (manager) => raiseConfigVersion(manager, event.projectId, version, new Date()));
        return version;
      }
      default:
        // Organizations and plans: nothing the scheduler keeps.
        return 0;
    }
  }

  private async once(consumer: string, envelope: Envelope, apply: (manager: EntityManager) => Promise<unknown>): Promise<void> {
    await Inbox.handleOnce(this.transactions, `scheduler.${consumer}`, envelope.id, ({ manager }) => apply(manager));
  }
}

function parseDefinition(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return null;
  }
}
