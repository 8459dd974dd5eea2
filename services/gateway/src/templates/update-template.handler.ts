import { Injectable } from '@nestjs/common';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { RequestTemplateRepository } from './request-template.repository.js';
import type { RunEndpoint } from './run-endpoints.js';
import { assertTemplate, TEMPLATE_ERRORS, templateView } from './template-rules.js';

/** Replaces a template's name, endpoint and body (edit access; checked by the caller). */
@Injectable()
export class UpdateTemplateHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(command: { project: ProjectEntity; id: string; name: string; endpoint: RunEndpoint; body: Record<string, unknown> }) {
    assertTemplate(command.project.type, command);
    const updated = await this.templates.update(command.project.id, command.id, { name: command.name, endpoint: command.endpoint, body: command.body, updatedAt: new Date() });
    if (!updated) throw new DomainError('not-found', TEMPLATE_ERRORS.notFound);
    return templateView(updated);
  }
}
