import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { CreateApiTokenBody } from './api-token-bodies.dto.js';
import { CreateApiTokenHandler } from './create-api-token.handler.js';
import { ListApiTokensHandler } from './list-api-tokens.handler.js';
import { RevokeApiTokenHandler } from './revoke-api-token.handler.js';

/** A project's API tokens, for signed-in console users. */
@Controller('v1/orgs/:orgId/projects')
@UseGuards(ConsoleAuthGuard)
export class ApiTokensController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createApiToken: CreateApiTokenHandler,
    private readonly listApiTokens: ListApiTokensHandler,
    private readonly revokeApiToken: RevokeApiTokenHandler,
  ) {}

  @Post(':projectId/api-tokens')
  async createToken(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: CreateApiTokenBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.createApiToken.execute({ project, userId: req.user.userId, name: body.name, scopes: body.scopes, expiresAt: body.expiresAt });
  }

  @Get(':projectId/api-tokens')
  async tokens(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.listApiTokens.execute({ projectId: project.id });
  }

  @Delete(':projectId/api-tokens/:tokenId')
  @HttpCode(204)
  async revokeToken(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { tokenId: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    await this.revokeApiToken.execute({ project, tokenId: params.tokenId });
  }
}

interface ProjectParams {
  orgId: string;
  projectId: string;
}
