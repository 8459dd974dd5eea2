import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ExternalApiGuard } from './external-api.guard.js';
import { EXTERNAL_ROUTE, type ExternalRouteOptions } from './external-route-options.js';

/** Marks a route as part of the external API: it passes the full token pipeline first. */
export const ExternalRoute = (options: ExternalRouteOptions) =>
  applyDecorators(SetMetadata(EXTERNAL_ROUTE, options), UseGuards(ExternalApiGuard));
