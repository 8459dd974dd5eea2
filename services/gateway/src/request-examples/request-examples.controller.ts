import { Controller, Get, Inject, Param, Query, Req, UseGuards } from '@nestjs/common';
import { GatewayConfig } from '../config.js';
import { BuildRequestExampleHandler } from './build-request-example.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';

/** The request example builder, for any member of the project's organization. */
@Controller('v1/orgs/:orgId/projects/:projectId/request-example')
@UseGuards(ConsoleAuthGuard)
export class RequestExamplesController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly buildRequestExample: BuildRequestExampleHandler,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  @Get()
  async example(
    @Req() req: ConsoleRequest,
    @Param('orgId') orgId: string,
    @Param('projectId') projectId: string,
    @Query('endpoint') endpoint: unknown,
    @Query('templateId') templateId: unknown,
  ) {
    const project = await this.access.requireProject(req.user, orgId, projectId, 'member');
    return this.buildRequestExample.execute({ project, baseUrl: this.baseUrl(req), endpoint: text(endpoint), templateId: text(templateId) });
  }

  /** PUBLIC_API_URL, or the address this request came in on. */
  private baseUrl(req: ConsoleRequest): string {
    return (this.config.PUBLIC_API_URL ?? `${req.protocol}://${req.host}`).replace(/\/$/, '');
  }
}

/** A query parameter given once; a repeated one (an array) counts as a bad value. */
function text(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : '';
}
