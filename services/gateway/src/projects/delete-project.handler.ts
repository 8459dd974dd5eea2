import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import { AccessDirectory } from '../platform/access/access-directory.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { RateLimitPolicies } from '../platform/rate-limits/rate-limit-policies.js';
import { ProjectRepository } from '../platform/store/project.repository.js';

/**
 * Deletes a project (OWNER only; checked by the caller). The row stays, marked deleted, so its
 * runs and dead letters keep their project; every token call to it answers 404 from the next
 * request on, its polls stop and nothing new runs for it.
 */
@Injectable()
export class DeleteProjectHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly projects: ProjectRepository,
    private readonly directory: AccessDirectory,
    private readonly rateLimits: RateLimitPolicies,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { projectId: string }): Promise<void> {
    const deleted = await this.transactions.run(async ({ manager, emit }) => {
      const project = await this.projects.lockForUpdate(manager, command.projectId);
      // A second DELETE of the same project is answered 404 by the access check; this only
      // guards a race between two.
      if (project.deletedAt) return null;
      project.deletedAt = new Date();
      project.configVersion += 1;
      await this.projects.saveDeleted(manager, project);
      const event = gatewayEvents.projectDeleted(project);
      emit(event);
      return event;
    });
    this.directory.evictProject(command.projectId);
    this.directory.evictTokensOfProject(command.projectId);
    this.rateLimits.evictProject(command.projectId);
    if (deleted) await this.propagation.inForce([deleted]);
  }
}
