import { RequestMethod, type Type } from '@nestjs/common';
import { GUARDS_METADATA, HTTP_CODE_METADATA, METHOD_METADATA, MODULE_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { GatewayModule } from '../gateway.module.js';
import { ConsoleAuthGuard } from '../platform/http-guards/console-auth.guard.js';
import { ExternalApiGuard } from '../platform/http-guards/external-api.guard.js';
import { TokenOrConsoleGuard } from '../platform/http-guards/token-or-console.guard.js';

/** Who may call a route, as its guards say. */
export type RouteCaller = 'api-token' | 'console-jwt' | 'api-token-or-console-jwt' | 'signature';

/** A route as the gateway's code declares it, read from Nest's own route metadata. */
export interface CodeRoute {
  /** Lowercase HTTP method; `all` for a route that takes any method (`@All`). */
  method: string;
  /** OpenAPI form: `/v1/orgs/{orgId}/projects`. */
  path: string;
  /** `GET /v1/orgs/{orgId}/plan`: the key of the route description table. */
  key: string;
  /** The DTO class its `@Body()` is validated against, when it has one. */
  body?: Type<unknown>;
  /** The status Nest answers with when the handler returns normally (`@HttpCode`, else 201 for POST, 200 otherwise). */
  defaultStatus: number;
  caller: RouteCaller;
}

/**
 * Every route of the gateway's controllers, without starting anything: the same decorator
 * metadata Nest reads when it registers them. The document is built from this list, so a new
 * route cannot be forgotten in it, only left undescribed (which the build refuses).
 */
export function gatewayRoutes(): CodeRoute[] {
  const controllers = (Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, GatewayModule) ?? []) as Array<Type<unknown>>;
  return controllers.flatMap(controllerRoutes);
}

function controllerRoutes(controller: Type<unknown>): CodeRoute[] {
  const prefix = pathOf(Reflect.getMetadata(PATH_METADATA, controller));
  const prototype = controller.prototype as Record<string, unknown>;
  const routes: CodeRoute[] = [];
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const handler = prototype[name];
    if (name === 'constructor' || typeof handler !== 'function') continue;
    const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    const own = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
    if (method === undefined || own === undefined) continue;
    const methodName = RequestMethod[method]!.toLowerCase();
    const path = toOpenApiPath(joinPaths(prefix, pathOf(own)));
    routes.push({
      method: methodName,
      path,
      key: `${methodName.toUpperCase()} ${path}`,
      body: bodyClassOf(controller, name),
      defaultStatus: (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === RequestMethod.POST ? 201 : 200),
      caller: callerOf(controller, handler),
    });
  }
  return routes;
}

function pathOf(value: unknown): string {
  const path = Array.isArray(value) ? value[0] : value;
  return typeof path === 'string' ? path.replace(/^\/+|\/+$/g, '') : '';
}

function joinPaths(prefix: string, own: string): string {
  return '/' + [prefix, own].filter((part) => part !== '').join('/');
}

/** `:orgId` → `{orgId}`. */
export function toOpenApiPath(nestPath: string): string {
  return nestPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function bodyClassOf(controller: Type<unknown>, handlerName: string): Type<unknown> | undefined {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handlerName) ?? {}) as Record<string, { index: number; data?: unknown }>;
  const body = Object.entries(args).find(([key, arg]) => key.split(':')[0] === String(RouteParamtypes.BODY) && arg.data === undefined);
  if (!body) return undefined;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, handlerName) ?? []) as unknown[];
  const type = types[body[1].index];
  // `@Body() body: unknown` (a body the handler checks itself) carries Object: no DTO.
  return typeof type === 'function' && type !== Object ? (type as Type<unknown>) : undefined;
}

function callerOf(controller: Type<unknown>, handler: unknown): RouteCaller {
  const guards = [...((Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as unknown[]), ...((Reflect.getMetadata(GUARDS_METADATA, handler as object) ?? []) as unknown[])];
  if (guards.includes(TokenOrConsoleGuard)) return 'api-token-or-console-jwt';
  if (guards.includes(ConsoleAuthGuard)) return 'console-jwt';
  if (guards.includes(ExternalApiGuard)) return 'api-token';
  // The inbound hooks: no credential, the delivery's signature is checked by the handler.
  return 'signature';
}
