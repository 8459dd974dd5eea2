import { Injectable } from '@nestjs/common';
import { ProjectApiSettingsRepository } from '../platform/store/project-api-settings.repository.js';
import { toApiSettingsView } from './api-settings-view.js';

/** A project's API settings, as the console shows them. */
@Injectable()
export class GetApiSettingsHandler {
  constructor(private readonly apiSettings: ProjectApiSettingsRepository) {}

  async execute(query: { projectId: string }) {
    return toApiSettingsView(await this.apiSettings.of(query.projectId));
  }
}
