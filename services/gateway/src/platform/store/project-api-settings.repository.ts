import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ProjectApiSettingsEntity } from './project-api-settings.entity.js';

/** Each project's API settings (one row per project, made with the project). */
@Injectable()
export class ProjectApiSettingsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, settings: ProjectApiSettingsEntity): Promise<void> {
    await manager.insert(ProjectApiSettingsEntity, settings);
  }

  /** The settings, their row locked until the transaction ends. */
  lockForUpdate(manager: EntityManager, projectId: string): Promise<ProjectApiSettingsEntity> {
    return manager.findOneOrFail(ProjectApiSettingsEntity, { where: { projectId }, lock: { mode: 'pessimistic_write' } });
  }

  async save(manager: EntityManager, settings: ProjectApiSettingsEntity): Promise<void> {
    await manager.save(ProjectApiSettingsEntity, settings);
  }

  of(projectId: string): Promise<ProjectApiSettingsEntity> {
    return this.dataSource.getRepository(ProjectApiSettingsEntity).findOneByOrFail({ projectId });
  }
}
