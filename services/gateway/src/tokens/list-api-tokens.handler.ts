import { Injectable } from '@nestjs/common';
import { ApiTokenRepository } from '../platform/store/api-token.repository.js';
import { TokenUsageRecorder } from '../platform/access/token-usage.recorder.js';

/** The project's tokens that are not revoked: never the token or its hash. */
@Injectable()
export class ListApiTokensHandler {
  constructor(
    private readonly apiTokens: ApiTokenRepository,
    private readonly usage: TokenUsageRecorder,
  ) {}

  async execute(query: { projectId: string }) {
    const tokens = await this.apiTokens.listLive(query.projectId);
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
