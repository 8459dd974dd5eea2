import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { TokenScope } from '../../entities/api-token.entity.js';
import type { ProjectType } from '../../entities/project.entity.js';
import { API_ERRORS, ApiError } from '../api-error.js';
import { isUuid } from '../console/console-access.js';
import { assertJsonObjectBody } from '../body-parsing.js';
import { ApiTokenFormat, hashApiToken } from '../../api-tokens/api-token-format.js';
import { AccessDirectory } from './access-directory.js';
import { EXTERNAL_ROUTE, type ExternalRouteOptions } from './external-route.decorator.js';
import { TokenUsageRecorder } from './token-usage.recorder.js';

/** Who is calling, once the pipeline has let the call through. */
export interface ExternalCaller {
  tokenId: string;
  orgId: string;
  projectId: string;
  projectType: ProjectType;
  scopes: readonly TokenScope[];
  /** The project's published version when the call came in. */
  publishedVersion: number;
  /** The project's configuration version when the call came in (current as of its arrival). */
  configVersion: number;
  /** The moment (performance.now()) the pipeline's reads are current as of; later checks reuse it. */
  checkedAt: number;
}

export type ExternalRequest = FastifyRequest<{ Params: Record<string, string> }> & { caller: ExternalCaller };

/**
 * The external API's checks, in the order of DESIGN.md's pipeline, each with its exact status
 * and message: token present and well formed (401), token known and live (401), project exists
 * in the organization (404), token of that project (401), master switch (403), project type
 * (400), scope (403), then the body's form (a JSON object). The version was checked before routing; the body's fields are
 * validated right after this guard.
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

    const presented = presentedToken(request);
    if (presented === undefined) throw new ApiError(401, API_ERRORS.missingToken);
    // A malformed token is refused on its checksum alone, without a database read.
    if (!this.tokenFormat.isWellFormed(presented)) throw new ApiError(401, API_ERRORS.invalidToken);
    // Both reads are checked against the projects' versions as of one moment after arrival.
    const since = performance.now();
    const token = await this.directory.tokenByHash(hashApiToken(presented), since);
    if (!token || token.revoked || (token.expiresAt && token.expiresAt.getTime() <= Date.now())) {
      throw new ApiError(401, API_ERRORS.invalidToken);
    }

    // The project named by the path (else the token's) must exist in that organization before
    // the token is matched to it, so a wrong id answers 404 whatever token is presented.
    const projectId = pathProjectId ?? token.projectId;
    const project = isUuid(projectId) ? await this.directory.project(projectId, since) : null;
    if (!project || project.deleted || project.orgId !== orgId) throw new ApiError(404, API_ERRORS.projectNotFound);
    if (project.id !== token.projectId) throw new ApiError(401, API_ERRORS.invalidToken);
    if (!project.externalApiEnabled) throw new ApiError(403, API_ERRORS.externalApiDisabled);
    // The project type before the scope: a route that cannot serve this project says so, even
    // to a token that lacks its scope (no token of the project can have a scope it never gets).
    const typeError = route.projectType?.(project.type);
    if (typeError) throw new ApiError(400, typeError);
    if (route.scope && !token.scopes.includes(route.scope)) throw new ApiError(403, API_ERRORS.insufficientScope);
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

/** `Authorization: Bearer <token>` or `x-api-key: <token>`; undefined when neither is sent. */
function presentedToken(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.trim();
  return undefined;
}
