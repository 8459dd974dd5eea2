import { Injectable } from '@nestjs/common';
import { DomainError } from '../platform/errors/domain-error.js';
import { RequestTemplateRepository } from './request-template.repository.js';
import { TEMPLATE_ERRORS, templateView } from './template-rules.js';

/** One template of the project; 404 for an unknown id or another project's. */
@Injectable()
export class GetTemplateHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(query: { projectId: string; id: string }) {
    const template = await this.templates.find(query.projectId, query.id);
    if (!template) throw new DomainError('not-found', TEMPLATE_ERRORS.notFound);
    return templateView(template);
  }
}
