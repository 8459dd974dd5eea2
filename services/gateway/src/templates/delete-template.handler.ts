import { Injectable } from '@nestjs/common';
import { DomainError } from '../platform/errors/domain-error.js';
import { RequestTemplateRepository } from './request-template.repository.js';
import { TEMPLATE_ERRORS } from './template-rules.js';

/** Removes a template from the project's library (edit access; checked by the caller). */
@Injectable()
export class DeleteTemplateHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(command: { projectId: string; id: string }): Promise<void> {
    if (!(await this.templates.delete(command.projectId, command.id))) throw new DomainError('not-found', TEMPLATE_ERRORS.notFound);
  }
}
