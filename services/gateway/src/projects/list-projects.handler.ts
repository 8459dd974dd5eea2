import { Injectable } from '@nestjs/common';
import { ProjectRepository } from '../platform/store/project.repository.js';
import { projectSummary } from './project-views.js';

/** The organization's live projects (deleted ones are gone for the console). */
@Injectable()
export class ListProjectsHandler {
  constructor(private readonly projects: ProjectRepository) {}

  async execute(query: { orgId: string }) {
    return { data: (await this.projects.listLive(query.orgId)).map(projectSummary) };
  }
}
