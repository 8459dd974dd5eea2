import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EVENT_TYPES, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { Inbox, TransactionRunner } from '@runline/db';

/** A project as the poller needs it. */
export interface ProjectState {
  pollable: boolean;
  configVersion: number;
}

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
          manager.query(
            `INSERT INTO project_copies AS p (project_id, org_id, external_api_enabled, settings_version, config_version)
             VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT (project_id) DO UPDATE SET
               external_api_enabled = CASE WHEN p.settings_version < EXCLUDED.settings_version THEN EXCLUDED.external_api_enabled ELSE p.external_api_enabled END,
               settings_version = GREATEST(p.settings_version, EXCLUDED.settings_version),
               config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
            [event.projectId, event.orgId, event.externalApiEnabled, version],
          ),
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
      case EVENT_TYPES.PROJECT_DELETED: {
        const event = unpackPayloadAs(envelope, EVENT_TYPES.PROJECT_DELETED);
        return this.once('project-deleted', envelope, Number(event.configVersion), async (manager, version) => {
          await manager.query(
            `INSERT INTO project_copies AS p (project_id, org_id, deleted, config_version) VALUES ($1, $2, true, $3)
             ON CONFLICT (project_id) DO UPDATE SET deleted = true, config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
            [event.projectId, event.orgId, version],
          );
          await manager.query('DELETE FROM polling_triggers WHERE project_id = $1', [event.projectId]);
        });
      }
      default:
        // Organizations and plans: nothing the poller keeps.
        return 0;
    }
  }

  /** The project as a poll coming due sees it; null when no event about it arrived yet. */
  async state(manager: EntityManager, projectId: string): Promise<ProjectState | null> {
    const rows: Array<{ external_api_enabled: boolean; deleted: boolean; config_version: number }> = await manager.query(
      'SELECT external_api_enabled, deleted, config_version FROM project_copies WHERE project_id = $1',
      [projectId],
    );
    const row = rows[0];
    return row ? { pollable: row.external_api_enabled && !row.deleted, configVersion: row.config_version } : null;
  }

  private async once(consumer: string, envelope: Envelope, version: number, apply: (manager: EntityManager, version: number) => Promise<unknown>): Promise<number> {
    await Inbox.handleOnce(this.transactions, `polling.${consumer}`, envelope.id, ({ manager }) => apply(manager, version));
    return version;
  }
}

/**
 * The project moves to at least `version`; a project first heard of here is pollable (the
 * gateway lets a trigger be registered only while the switch is on).
 */
export function raiseVersion(manager: EntityManager, projectId: string, orgId: string, version: number): Promise<unknown> {
  return manager.query(
    `INSERT INTO project_copies AS p (project_id, org_id, config_version) VALUES ($1, $2, $3)
     ON CONFLICT (project_id) DO UPDATE SET config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
    [projectId, orgId, version],
  );
}
