import { Injectable } from '@nestjs/common';
import { DataSource, IsNull } from 'typeorm';
import { ApiTokenEntity } from '../entities/api-token.entity.js';
import { TokenUsageRecorder } from '../http/external/token-usage.recorder.js';

/** The project's tokens that are not revoked: never the token or its hash. */
@Injectable()
export class ListApiTokensHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly usage: TokenUsageRecorder,
  ) {}

  async execute(query: { projectId: string }) {
    const tokens = await this.dataSource
      .getRepository(ApiTokenEntity)
      .find({ where: { projectId: query.projectId, revokedAt: IsNull() }, order: { createdAt: 'ASC' } });
    return {
      data: tokens.map((token) => {
        const lastUsedAt = this.usage.pendingUse(token.id) ?? token.lastUsedAt;
        return {
          id: token.id,
          name: token.name,
          prefix: token.prefix,
          scopes: token.scopes,
          expiresAt: token.expiresAt?.toISOString() ?? null,
          lastUsedAt: lastUsedAt?.toISOString() ?? null,
          createdAt: token.createdAt.toISOString(),
        };
      }),
    };
  }
}
