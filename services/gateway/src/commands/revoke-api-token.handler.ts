import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import { TransactionRunner } from '@runline/db';
import { ChangePropagation } from '../changes/change-propagation.js';
import { nextConfigVersion } from '../changes/config-version.js';
import { ApiTokenEntity } from '../entities/api-token.entity.js';
import type { ProjectEntity } from '../entities/project.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';
import { ApiError } from '../http/api-error.js';
import { isUuid } from '../http/console/console-access.js';
import { AccessDirectory } from '../http/external/access-directory.js';

/** Revokes a token; every replica refuses it from the next call on. */
@Injectable()
export class RevokeApiTokenHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly directory: AccessDirectory,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { project: ProjectEntity; tokenId: string }): Promise<void> {
    if (!isUuid(command.tokenId)) throw new ApiError(404, 'API token not found');
    const revoked = await this.transactions.run(async ({ manager, emit }) => {
      const found = await manager.findOneBy(ApiTokenEntity, { id: command.tokenId, projectId: command.project.id, revokedAt: IsNull() });
      if (!found) throw new ApiError(404, 'API token not found');
      found.revokedAt = new Date();
      await manager.save(ApiTokenEntity, found);
      const event = gatewayEvents.apiTokenRevoked(found, await nextConfigVersion(manager, found.projectId));
      emit(event);
      return { token: found, event };
    });
    this.directory.evictToken(revoked.token.tokenHash);
    await this.propagation.inForce([revoked.event]);
  }
}
