import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { GatewayConfig } from './config.js';
import { GatewayModule } from './gateway.module.js';
import { registerJsonBodyParser } from './platform/http-pipeline/body-parsing.js';
import { registerConsoleSite } from './console-site/console-site.js';
import { registerVersionCheck } from './platform/http-pipeline/version.hook.js';
import { CreateGatewayTables1763700000001 } from './migrations/1763700000001-create-gateway-tables.js';
import { KeepDefinitionKeyOrder1763700000002 } from './migrations/1763700000002-keep-definition-key-order.js';
import { CreateRateLimitCounters1763700000010 } from './migrations/1763700000010-create-rate-limit-counters.js';
import { AddConfigVersions1763700000020 } from './migrations/1763700000020-add-config-versions.js';
import { AddDraftVersions1763700000040 } from './migrations/1763700000040-add-draft-versions.js';
import { CreateRequestTemplates1763700000041 } from './migrations/1763700000041-create-request-templates.js';
import { CreateDefinitionVersions1763700000042 } from './migrations/1763700000042-create-definition-versions.js';
import { AddMaxConcurrentRuns1763700000320 } from './migrations/1763700000320-add-max-concurrent-runs.js';
import { registerOpenApiRoute } from './openapi/openapi.route.js';

export const gatewayService: ServiceDefinition = {
  name: 'gateway',
  schema: 'gateway',
  module: GatewayModule,
  migrations: [CreateOutboxAndInbox1763700000000, CreateGatewayTables1763700000001, KeepDefinitionKeyOrder1763700000002, CreateRateLimitCounters1763700000010, AddConfigVersions1763700000020, AddDraftVersions1763700000040, CreateRequestTemplates1763700000041, CreateDefinitionVersions1763700000042, AddMaxConcurrentRuns1763700000320, IndexInboxProcessedAt1763700000900],
  configureHttp(app) {
    const fastify = app.getHttpAdapter().getInstance();
    // The version is the first check of the pipeline, before the body is even read.
    registerVersionCheck(fastify);
    registerJsonBodyParser(fastify, app.get(GatewayConfig).MAX_BODY_BYTES);
    // The pipeline hangs its result on the request; declaring it keeps requests one shape.
    fastify.decorateRequest('caller', null);
    // The web console's files; before the document's route record, as they are no API.
    registerConsoleSite(fastify);
    // The published API description, and the record of every route it must describe.
    registerOpenApiRoute(fastify);
  },
};
