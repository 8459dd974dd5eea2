import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ApiTokenFormat } from '../platform/access/api-token-format.js';
import type { ApiTokenEntity, TokenScope } from '../platform/store/api-token.entity.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ApiTokenRepository } from '../platform/store/api-token.repository.js';

/**
 * Issues an API token for one project. The token is returned once and only its SHA-256 is
 * stored. As in the spec's app, flow:trigger is offered for chatbot projects only; the other
 * scopes are accepted on either type (a call then meets the project-type check).
 */
@Injectable()
export class CreateApiTokenHandler {
  constructor(
    private readonly apiTokens: ApiTokenRepository,
    @Inject(ApiTokenFormat) private readonly format: ApiTokenFormat,
  ) {}

  async execute(command: { project: ProjectEntity; userId: string; name: string; scopes: TokenScope[]; expiresAt?: string }) {
    if (command.project.type !== 'CHATBOT' && command.scopes.includes('flow:trigger')) {
      throw new DomainError('invalid', 'flow:trigger is only offered for chatbot projects');
    }
    const expiresAt = command.expiresAt ? new Date(command.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw new DomainError('invalid', 'expiresAt must be in the future');
    const issued = this.format.issue();
    const scopes = [...new Set(command.scopes)];
    const token: ApiTokenEntity = {
      id: randomUUID(),
      orgId: command.project.orgId,
      projectId: command.project.id,
      name: command.name,
      prefix: issued.displayPrefix,
      tokenHash: issued.hash,
      scopes,
      expiresAt,
      revokedAt: null,
      lastUsedAt: null,
      createdBy: command.userId,
      createdAt: new Date(),
    };
    await this.apiTokens.insert(token);
    return {
      id: token.id,
      name: token.name,
      prefix: token.prefix,
      scopes,
      expiresAt: expiresAt?.toISOString() ?? null,
      createdAt: token.createdAt.toISOString(),
      token: issued.token,
    };
  }
}
