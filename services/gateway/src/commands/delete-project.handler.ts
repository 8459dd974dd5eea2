import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { ChangePropagation } from '../changes/change-propagation.js';
import { ProjectEntity } from '../entities/project.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';
import { AccessDirectory } from '../http/external/access-directory.js';
import { RateLimitPolicies } from '../http/external/rate-limits/rate-limit-policies.js';

/**
 * Deletes a project (OWNER only; checked by the caller). The row stays, marked deleted, so its
 * runs and dead letters keep their project; every token call to it answers 404 from the next
 * request on, its polls stop and nothing new runs for it.
 */
@Injectable()
export class DeleteProjectHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly directory: AccessDirectory,
    private readonly rateLimits: RateLimitPolicies,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { projectId: string }): Promise<void> {
    const deleted = await this.transactions.run(async ({ manager, emit }) => {
      const project = await manager.findOneOrFail(ProjectEntity, { where: { id: command.projectId }, lock: { mode: 'pessimistic_write' } });
      // A second DELETE of the same project is answered 404 by the access check; this only
      // guards a race between two.
      if (project.deletedAt) return null;
      project.deletedAt = new Date();
      project.configVersion += 1;
      await manager.save(ProjectEntity, project);
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
