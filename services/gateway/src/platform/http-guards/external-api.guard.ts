import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { isUuid } from '@runline/contracts';
import { AccessDirectory } from '../access/access-directory.js';
import type { Caller } from '../access/caller.js';
import { ApiTokenFormat, hashApiToken } from '../access/api-token-format.js';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { TokenUsageRecorder } from '../access/token-usage.recorder.js';
import { assertJsonObjectBody } from '../http-pipeline/body-parsing.js';
import { presentedCredential } from './credentials.js';
import { EXTERNAL_ROUTE, type ExternalRouteOptions } from './external-route-options.js';

export type ExternalRequest = FastifyRequest<{ Params: Record<string, string> }> & { caller: Caller };

/**
 * The external API's checks, in the pipeline's order, each with its exact message (its status
 * comes from the refusal's kind): the version (checked before routing, version.hook.ts), token
 * present and well formed (unauthenticated), token known and live (unauthenticated), project
 * exists in the organization (not found), token of that project (unauthenticated), master
 * switch (forbidden), project type (invalid), scope (forbidden), then the body's form (a JSON
 * object). Then come the rate limit (RateLimitGuard, on the routes that have one) and the
 * body's fields (BodyValidationPipe). A check that fails stops the call there, so an earlier
 * check's refusal always wins over a later one's.
 */
@Injectable()
export class ExternalApiGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly directory: AccessDirectory,
    private readonly usage: TokenUsageRecorder,
    @Inject(ApiTokenFormat) private readonly tokenFormat: ApiTokenFormat,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.reflector.get<ExternalRouteOptions>(EXTERNAL_ROUTE, context.getHandler());
    const request = context.switchToHttp().getRequest<ExternalRequest>();
    const orgId = request.params.orgId;
    const pathProjectId = request.params.projectId;

    const presented = presentedCredential(request)?.value;
    if (presented === undefined) throw new DomainError('unauthenticated', API_ERRORS.missingToken);
    // A malformed token is refused on its checksum alone, without a database read.
    if (!this.tokenFormat.isWellFormed(presented)) throw new DomainError('unauthenticated', API_ERRORS.invalidToken);
    // Both reads are checked against the projects' versions as of one moment after arrival.
    const since = performance.now();
    const token = await this.directory.tokenByHash(hashApiToken(presented), since);
    if (!token || token.revoked || (token.expiresAt && token.expiresAt.getTime() <= Date.now())) {
      throw new DomainError('unauthenticated', API_ERRORS.invalidToken);
    }

    // The project named by the path (else the token's) must exist in that organization before
    // the token is matched to it, so a wrong id answers 404 whatever token is presented.
    const projectId = pathProjectId ?? token.projectId;
    const project = isUuid(projectId) ? await this.directory.project(projectId, since) : null;
    if (!project || project.deleted || project.orgId !== orgId) throw new DomainError('not-found', API_ERRORS.projectNotFound);
    if (project.id !== token.projectId) throw new DomainError('unauthenticated', API_ERRORS.invalidToken);
    if (!project.externalApiEnabled) throw new DomainError('forbidden', API_ERRORS.externalApiDisabled);
    // The project type before the scope: a route that cannot serve this project says so, even
    // to a token that lacks its scope (no token of the project can have a scope it never gets).
    const typeError = route.projectType?.(project.type);
    if (typeError) throw new DomainError('invalid', typeError);
    if (route.scope && !token.scopes.includes(route.scope)) throw new DomainError('forbidden', API_ERRORS.insufficientScope);
    assertJsonObjectBody(request);

    this.usage.recordUse(token.id);
    request.caller = {
      tokenId: token.id,
      orgId: project.orgId,
      projectId: project.id,
      projectType: project.type,
      scopes: token.scopes,
      publishedVersion: project.publishedVersion,
      configVersion: project.configVersion,
      checkedAt: since,
    };
    return true;
  }
}

