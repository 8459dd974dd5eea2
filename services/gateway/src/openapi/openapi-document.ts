import type { Type } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { ANSWER_SCHEMAS, ref } from './answer-schemas.js';
import { gatewayRoutes, type CodeRoute, type RouteCaller } from './gateway-routes.js';
import { ROUTE_DESCRIPTIONS, type AnswerDescription, type RouteDescription } from './route-descriptions.js';

type Schema = Record<string, unknown>;

export const OPENAPI_PATH = '/v1/openapi.json';

/** `@All` routes are documented with the methods a client can call them with. */
const ALL_METHODS = ['post', 'get', 'put', 'patch', 'delete'];

const SECURITY: Record<RouteCaller, Array<Record<string, string[]>>> = {
  'api-token': [{ apiToken: [] }, { apiKey: [] }],
  'console-jwt': [{ consoleJwt: [] }],
  'api-token-or-console-jwt': [{ apiToken: [] }, { apiKey: [] }, { consoleJwt: [] }],
  // An inbound hook's credential is the delivery's signature (X-Runline-Signature), checked by the handler.
  signature: [],
};

/**
 * The published OpenAPI 3.1 document, built from the code: the routes and their request bodies
 * from the controllers' metadata and DTO classes (gateway-routes.ts, class-validator's rules),
 * what each answers from the one route description table (route-descriptions.ts). Throws when a
 * route has no description or a description names no route, so neither can be forgotten.
 */
export function buildOpenApiDocument(): Schema {
  const routes = gatewayRoutes();
  const keys = new Set(routes.map((route) => route.key));
  const undescribed = routes.filter((route) => !ROUTE_DESCRIPTIONS[route.key]).map((route) => route.key);
  const unrouted = Object.keys(ROUTE_DESCRIPTIONS).filter((key) => !keys.has(key));
  if (undescribed.length || unrouted.length) {
    throw new Error(
      `The OpenAPI route table (services/gateway/src/openapi/route-descriptions.ts) is out of date. ` +
        `Routes without a description: ${undescribed.join(', ') || 'none'}. Descriptions without a route: ${unrouted.join(', ') || 'none'}.`,
    );
  }

  const bodySchemas: Record<string, Schema> = {};
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes) {
    const description = ROUTE_DESCRIPTIONS[route.key]!;
    assertSuccessMatches(route, description);
    let requestBody: Schema | undefined;
    if (route.body) {
      bodySchemas[route.body.name] ??= bodySchemaOf(route.body);
      requestBody = ref(route.body.name);
    } else if (description.requestBody) {
      requestBody = description.requestBody;
    }
    const methods = route.method === 'all' ? ALL_METHODS : [route.method];
    for (const method of methods) {
      (paths[route.path] ??= {})[method] = operation(route, method, description, requestBody);
    }
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Runline API',
      version: '1.0.0',
      description:
        'Start, schedule and watch runs of chatbot and automation projects (token routes), and manage them (console routes, for signed-in users). ' +
        'Every refusal is `{error}`; some carry more fields, named in each response.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'The gateway' }],
    tags: [...new Set(Object.values(ROUTE_DESCRIPTIONS).map((route) => route.tag))].map((name) => ({ name })),
    paths: sortKeys(paths),
    components: {
      schemas: sortKeys({ ...ANSWER_SCHEMAS, ...bodySchemas }),
      securitySchemes: {
        apiToken: { type: 'http', scheme: 'bearer', description: 'An API token (`rl_ext_…`) issued in the console, as `Authorization: Bearer <token>`.' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same API token, in the `x-api-key` header.' },
        consoleJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A signed-in user’s console JWT (HS256, RS256 or ES256).' },
      },
    },
  };
}

function operation(route: CodeRoute, method: string, description: RouteDescription, requestBody: Schema | undefined): Schema {
  const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => ({ name: match[1], in: 'path', required: true, schema: { type: 'string' } }));
  const other = (description.query ?? []).map((parameter) => ({
    name: parameter.name,
    in: parameter.in ?? 'query',
    required: parameter.required ?? false,
    schema: parameter.schema,
    ...(parameter.description ? { description: parameter.description } : {}),
  }));
  const hook = route.method === 'all';
  const responses: Record<number, AnswerDescription> = hook && method !== 'post' ? { 405: description.responses[405]! } : { ...description.responses };
  // Fastify's router refuses a path parameter over 100 characters before any of our code runs.
  if (pathParameters.length) responses[414] = { description: 'A path parameter is longer than 100 characters.', messages: ['URI Too Long'] };
  return {
    operationId: operationId(method, route.path),
    summary: hook && method !== 'post' ? 'Not allowed: inbound hooks take POST only' : description.summary,
    tags: [description.tag],
    security: SECURITY[route.caller],
    parameters: [...pathParameters, ...other],
    ...(requestBody && !(hook && method !== 'post') && ['post', 'put', 'patch'].includes(method)
      ? { requestBody: { required: true, content: { 'application/json': { schema: requestBody } } } }
      : hook && method === 'post'
        ? { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } } }
        : {}),
    responses: Object.fromEntries(Object.entries(responses).map(([status, answer]) => [status, response(answer)])),
  };
}

function response(answer: AnswerDescription): Schema {
  const messages = answer.messages?.length ? ` Messages: ${answer.messages.map((message) => `\`${message}\``).join('; ')}.` : '';
  const result: Schema = { description: answer.description + messages };
  if (answer.headers?.length) result.headers = Object.fromEntries(answer.headers.map((name) => [name, { schema: { type: 'string' } }]));
  if (answer.noBody) return result;
  const schema = answer.schema ?? 'Error';
  result.content = { 'application/json': { schema: typeof schema === 'string' ? ref(schema) : schema } };
  return result;
}

/** The table's success status must be the one the code answers with (`@HttpCode`, or Nest's default). */
function assertSuccessMatches(route: CodeRoute, description: RouteDescription): void {
  if (route.method === 'all') return;
  const documented = Object.keys(description.responses).map(Number).filter((status) => status < 300);
  // Run routes set their own status per outcome (200, 202, 500) on the reply.
  if (!documented.includes(route.defaultStatus) && description.tag !== 'Runs') {
    throw new Error(`${route.key} answers ${route.defaultStatus} but its description documents ${documented.join(', ')}`);
  }
}

/**
 * The DTO's class-validator rules as JSON Schema (2020-12 is OpenAPI 3.1's dialect). Required
 * means `@IsDefined` (every required field of ours says so). A field whose `@IsOptional` or
 * `@ValidateIf` skips its rules for null accepts null, so the schema says that too: the
 * condition itself is asked.
 */
function bodySchemaOf(dto: Type<unknown>): Schema {
  const storage = getMetadataStorage();
  const schema = targetConstructorToSchema(dto, {
    classValidatorMetadataStorage: storage,
    refPointerPrefix: '#/components/schemas/',
    skipMissingProperties: true,
    // A validator of our own says nothing of its shape: a union-typed field (`string | string[]`)
    // would otherwise become a reference to a schema named `Object`, which does not exist.
    additionalConverters: { [ValidationTypes.CUSTOM_VALIDATION]: (meta) => customValidationSchema(meta.target, meta.propertyName) },
  }) as Schema;
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const conditions = storage.getTargetValidationMetadatas(dto, '', true, false).filter((meta) => meta.type === ValidationTypes.CONDITIONAL_VALIDATION);
  for (const meta of conditions) {
    const property = properties[meta.propertyName];
    const condition = meta.constraints?.[0] as ((object: object, value: unknown) => boolean) | undefined;
    if (!property || typeof condition !== 'function' || condition({ [meta.propertyName]: null }, null)) continue;
    delete property.not;
    if (typeof property.type === 'string') property.type = [property.type, 'null'];
    if (Array.isArray(property.enum) && !property.enum.includes(null)) property.enum = [...(property.enum as unknown[]), null];
  }
  return schema;
}

function customValidationSchema(target: unknown, property: string): Schema {
  const type = typeof target === 'function' ? (Reflect.getMetadata('design:type', target.prototype as object, property) as unknown) : undefined;
  if (type === String) return { type: 'string' };
  if (type === Number) return { type: 'number' };
  if (type === Boolean) return { type: 'boolean' };
  if (type === Array) return { type: 'array' };
  return {};
}

function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1)));
  return method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
