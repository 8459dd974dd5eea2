import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { RequestTemplateRepository } from './request-template.repository.js';
import type { RunEndpoint } from './run-endpoints.js';
import { assertTemplate, TEMPLATE_ERRORS, TEMPLATE_LIMITS, templateView } from './template-rules.js';

/** Adds a template to the project's library (edit access; checked by the caller). */
@Injectable()
export class CreateTemplateHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(command: { project: ProjectEntity; name: string; endpoint: RunEndpoint; body: Record<string, unknown> }) {
    assertTemplate(command.project.type, command);
    const now = new Date();
    const template = { id: randomUUID(), projectId: command.project.id, name: command.name, endpoint: command.endpoint, body: command.body, createdAt: now, updatedAt: now };
    if (!(await this.templates.insertWithin(template, TEMPLATE_LIMITS.perProject))) throw new DomainError('conflict', TEMPLATE_ERRORS.tooMany);
    return templateView(template);
  }
}
