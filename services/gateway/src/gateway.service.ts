import { CreateOutboxAndInbox1763700000000 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { ApiTokenEntity } from './entities/api-token.entity.js';
import { MembershipEntity } from './entities/membership.entity.js';
import { OrganizationEntity } from './entities/organization.entity.js';
import { ProjectApiSettingsEntity } from './entities/project-api-settings.entity.js';
import { ProjectEntity } from './entities/project.entity.js';
import { GatewayConfig } from './config.js';
import { GatewayModule } from './gateway.module.js';
import { deferBodyErrors, jsonBodyParser } from './http/body-parsing.js';
import { versionMiddleware } from './http/version.middleware.js';
import { CreateGatewayTables1763700000001 } from './migrations/1763700000001-create-gateway-tables.js';

export const gatewayService: ServiceDefinition = {
  name: 'gateway',
  schema: 'gateway',
  module: GatewayModule,
  entities: [OrganizationEntity, MembershipEntity, ProjectEntity, ProjectApiSettingsEntity, ApiTokenEntity],
  migrations: [CreateOutboxAndInbox1763700000000, CreateGatewayTables1763700000001],
  configureHttp(app) {
    const config = app.get(GatewayConfig);
    app.disable('x-powered-by');
    // The version is the first check of the pipeline, before the body is even read.
    app.use(versionMiddleware);
    app.use(jsonBodyParser(config.MAX_BODY_BYTES));
    app.use(deferBodyErrors);
  },
};
