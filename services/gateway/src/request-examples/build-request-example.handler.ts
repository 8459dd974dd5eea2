import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { RequestTemplateRepository } from '../templates/index.js';
import { exampleBody } from './example-body.js';
import { curlSnippet, javascriptSnippet, pythonSnippet, TOKEN_PLACEHOLDER } from './request-snippets.js';
import { endpointMismatch, isRunEndpoint, RUN_ENDPOINT_ERRORS, RUN_ENDPOINT_INFO, type RunEndpoint } from '../templates/index.js';
import { TEMPLATE_ERRORS } from '../templates/index.js';

// Ours (the design gives the route, not its refusals).
export const REQUEST_EXAMPLE_ERRORS = {
  endpointRequired: 'endpoint is required (or a templateId, whose endpoint is then used)',
  templateEndpoint: (asked: RunEndpoint, template: RunEndpoint) => `endpoint ${asked} does not match the template's endpoint (${template})`,
} as const;

/**
 * The request example builder: one request to a run endpoint of the project, as data and as
 * curl, JavaScript and Python that work when pasted (with RUNLINE_TOKEN set). The body is the
 * template's, or the keys the Trigger node of the published definition checks (the draft's
 * when nothing is published yet: that is the one being built, and it is what runs next).
 */
@Injectable()
export class BuildRequestExampleHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(query: { project: ProjectEntity; baseUrl: string; endpoint?: string; templateId?: string }) {
    const { project } = query;
    if (query.endpoint !== undefined && !isRunEndpoint(query.endpoint)) throw new DomainError('invalid', RUN_ENDPOINT_ERRORS.unknown);
    const template = query.templateId === undefined ? null : await this.templates.find(project.id, query.templateId);
    if (query.templateId !== undefined && !template) throw new DomainError('not-found', TEMPLATE_ERRORS.notFound);
    const endpoint = (query.endpoint as RunEndpoint | undefined) ?? template?.endpoint;
    if (!endpoint) throw new DomainError('invalid', REQUEST_EXAMPLE_ERRORS.endpointRequired);
    if (template && template.endpoint !== endpoint) throw new DomainError('invalid', REQUEST_EXAMPLE_ERRORS.templateEndpoint(endpoint, template.endpoint));
    const mismatch = endpointMismatch(endpoint, project.type);
    if (mismatch) throw new DomainError('invalid', mismatch);

    const url = `${query.baseUrl}/v1/orgs/${project.orgId}/${RUN_ENDPOINT_INFO[endpoint].path(project.id)}`;
    const body = template?.body ?? exampleBody(endpoint, project.publishedDefinition ?? project.draftDefinition);
    return {
      method: 'POST',
      url,
      headers: {
        Authorization: `Bearer ${TOKEN_PLACEHOLDER}`,
        'Content-Type': 'application/json',
        // An example value: the snippets make a new key each time they run.
        'x-idempotency-key': randomUUID(),
      },
      body,
      snippets: { curl: curlSnippet({ url, body }), javascript: javascriptSnippet({ url, body }), python: pythonSnippet({ url, body }) },
    };
  }
}
