import { Injectable } from '@nestjs/common';
import { RequestTemplateRepository } from '../repositories/request-template.repository.js';
import { templateView } from '../templates/template-rules.js';

/** The project's template library, oldest first. */
@Injectable()
export class ListTemplatesHandler {
  constructor(private readonly templates: RequestTemplateRepository) {}

  async execute(query: { projectId: string }) {
    return { data: (await this.templates.list(query.projectId)).map(templateView) };
  }
}
