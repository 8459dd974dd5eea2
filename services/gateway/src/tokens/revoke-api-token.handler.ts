import { Injectable } from '@nestjs/common';
import { isUuid } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { AccessDirectory } from '../platform/access/access-directory.js';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { ApiTokenRepository } from '../platform/store/api-token.repository.js';
import { ProjectRepository } from '../platform/store/project.repository.js';

const TOKEN_NOT_FOUND = 'API token not found';

/** Revokes a token; every replica refuses it from the next call on. */
@Injectable()
export class RevokeApiTokenHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly apiTokens: ApiTokenRepository,
    private readonly projects: ProjectRepository,
    private readonly directory: AccessDirectory,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { project: ProjectEntity; tokenId: string }): Promise<void> {
    if (!isUuid(command.tokenId)) throw new DomainError('not-found', TOKEN_NOT_FOUND);
    const revoked = await this.transactions.run(async ({ manager, emit }) => {
      const found = await this.apiTokens.findLive(manager, command.tokenId, command.project.id);
      if (!found) throw new DomainError('not-found', TOKEN_NOT_FOUND);
      found.revokedAt = new Date();
      await this.apiTokens.saveRevoked(manager, found);
      const event = gatewayEvents.apiTokenRevoked(found, await this.projects.nextConfigVersion(manager, found.projectId));
      emit(event);
      return { token: found, event };
    });
    this.directory.evictToken(revoked.token.tokenHash);
    await this.propagation.inForce([revoked.event]);
  }
}
