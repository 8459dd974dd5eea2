import { Injectable } from '@nestjs/common';
import { RequestTemplateRepository } from './request-template.repository.js';
import { templateView } from './template-rules.js';

/** The project's template library, oldest first. */
@Injectable()
export class ListTemplatesHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(query: { projectId: string }) {
    return { data: (await this.templates.list(query.projectId)).map(templateView) };
  }
}
