import type { Type } from '@nestjs/common';
import { getMetadataStorage, IS_ISO8601, ValidationTypes } from 'class-validator';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { MAX_DELAY_SECONDS, MAX_SCHEDULE_AHEAD_DAYS } from '../runs/index.js';
import { ANSWER_SCHEMAS, ref, uuid } from '../platform/api-docs/answer-schemas.js';
import { gatewayRoutes, type CodeRoute, type RouteCaller } from './gateway-routes.js';
import { ROUTE_DESCRIPTIONS, TAG_DESCRIPTIONS, type AnswerDescription, type RouteDescription } from './route-descriptions.js';

type Schema = Record<string, unknown>;

export const OPENAPI_PATH = '/v1/openapi.json';

/**
 * An `@All` route (the inbound hook) takes every method so that it can answer the others 405;
 * only POST does anything, so only POST is published. An operation whose one answer is 405
 * would tell a client nothing it can use (and Redocly rightly asks every operation for a 2xx);
 * the 405 is said in the POST operation's description.
 */
const ALL_ROUTE_METHOD = 'post';

/** What each path parameter names; an `{id}` is named by the collection before it. */
const PATH_PARAMETERS: Record<string, string> = {
  orgId: 'The organization’s id.',
  projectId: 'The project’s id.',
  invocationId: 'The run’s id (`invocationId` in the answer that started it).',
  tokenId: 'The API token’s id.',
  hookId: 'The inbound hook’s id.',
  subscriptionId: 'The managed subscription’s id.',
  pollKey: 'The polling trigger’s key.',
  hooks: 'The inbound hook’s id (the last segment of its `url`), or a managed subscription’s (of its `endpoint`).',
  templates: 'The template’s id.',
  'dead-letters': 'The dead-letter event’s id.',
  schedules: 'The schedule’s id in the published definition (`workflow.schedules[].id`, `[a-z0-9-]{1,64}`).',
  version: 'A published version of the definition: a positive integer, as `publishedVersion` and the version history name it.',
};

/** Collections whose `{id}` is a name the caller chose (a schedule's, in its definition), not one of our UUIDs. */
const NAMED_IDS = new Set(['schedules']);

/**
 * Body fields a handler checks itself rather than the DTO (the scheduling rules, an approval's
 * comment), so class-validator cannot describe them; and the flow trigger's further top-level
 * fields, which become the run's payload. Without them here the typed client could not send them.
 */
const SCHEDULING_FIELDS: Record<string, Schema> = {
  runAt: {
    type: 'string',
    format: 'date-time',
    description: `When to run (async trigger endpoints and \`reschedule\` only; the sync endpoints ignore it): ISO 8601 with \`Z\` or an offset, in the future, at most ${MAX_SCHEDULE_AHEAD_DAYS} days ahead. Not with delaySeconds.`,
  },
  delaySeconds: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: MAX_DELAY_SECONDS,
    description: 'Run this many seconds from now (async trigger endpoints and `reschedule` only; the sync endpoints ignore it). Not with runAt.',
  },
};
const BODY_SUPPLEMENTS: Record<string, Schema> = {
  FlowTriggerBody: {
    properties: SCHEDULING_FIELDS,
    additionalProperties: { description: 'Any further top-level field is part of the run’s payload (`orderId`, …).' },
  },
  AutomationTriggerBody: { properties: SCHEDULING_FIELDS },
  ModifyInvocationBody: {
    properties: {
      ...SCHEDULING_FIELDS,
      comment: { type: 'string', maxLength: 2000, description: '`approve` and `reject` only: recorded with the decision.' },
    },
  },
};

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
 * what each answers from the one route description table (route-descriptions.ts, composed of each feature's own). Throws when a
 * route has no description or a description names no route, so neither can be forgotten.
 */
export function buildOpenApiDocument(): Schema {
  const routes = gatewayRoutes();
  const keys = new Set(routes.map((route) => route.key));
  const undescribed = routes.filter((route) => !ROUTE_DESCRIPTIONS[route.key]).map((route) => route.key);
  const unrouted = Object.keys(ROUTE_DESCRIPTIONS).filter((key) => !keys.has(key));
  if (undescribed.length || unrouted.length) {
    throw new Error(
      `The OpenAPI route table (each feature's <feature>-route-descriptions.ts, composed in services/gateway/src/openapi/route-descriptions.ts) is out of date. ` +
        `Routes without a description: ${undescribed.join(', ') || 'none'}. Descriptions without a route: ${unrouted.join(', ') || 'none'}.`,
    );
  }

  const bodySchemas: Record<string, Schema> = {};
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes) {
    const description = ROUTE_DESCRIPTIONS[route.key]!;
    assertSuccessMatches(route, description);
    const method = route.method === 'all' ? ALL_ROUTE_METHOD : route.method;
    let requestBody: Schema | undefined;
    if (route.body) {
      bodySchemas[route.body.name] ??= bodySchemaOf(route.body);
      requestBody = ref(route.body.name);
    } else if (description.requestBody) {
      requestBody = description.requestBody;
    } else if (route.method === 'all') {
      // The inbound hook's body is the sender's own JSON object.
      requestBody = { type: 'object', additionalProperties: true, description: 'The delivery: any JSON object (at most 256 KiB).' };
    }
    (paths[route.path] ??= {})[method] = operation(route, method, description, requestBody);
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
    tags: Object.entries(TAG_DESCRIPTIONS).map(([name, description]) => ({ name, description })),
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
  const segments = route.path.split('/');
  const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => {
    const name = match[1]!;
    // `{id}` is named by the collection before it: `/hooks/{id}`, `/templates/{id}`.
    const collection = name === 'id' ? segments[segments.indexOf('{id}') - 1]! : name;
    const about = PATH_PARAMETERS[collection];
    if (!about) throw new Error(`The path parameter ${name} of ${route.key} has no description in openapi-document.ts`);
    // Every id of ours is a UUID; a key (pollKey) or a schedule's id is the caller's own string.
    const isUuid = (name === 'id' || name.endsWith('Id')) && !NAMED_IDS.has(collection);
    return { name, in: 'path', required: true, description: about, schema: isUuid ? uuid : { type: 'string' } };
  });
  const other = (description.query ?? []).map((parameter) => ({
    name: parameter.name,
    in: parameter.in ?? 'query',
    required: parameter.required ?? false,
    schema: parameter.schema,
    ...(parameter.description ? { description: parameter.description } : {}),
  }));
  const responses: Record<number, AnswerDescription> = { ...description.responses };
  // Fastify's router refuses a path parameter over 100 characters before any of our code runs.
  if (pathParameters.length) responses[414] = { description: 'A path parameter is longer than 100 characters.', messages: ['URI Too Long'] };
  const takesBody = requestBody !== undefined && ['post', 'put', 'patch'].includes(method);
  if (takesBody && description.requestExample === undefined) throw new Error(`${route.key} takes a body but its description has no requestExample`);
  return {
    operationId: operationId(method, route.path),
    summary: description.summary,
    description: description.description,
    tags: [description.tag],
    security: SECURITY[route.caller],
    parameters: [...pathParameters, ...other],
    ...(takesBody ? { requestBody: { required: true, content: { 'application/json': { schema: requestBody, example: description.requestExample } } } } : {}),
    responses: Object.fromEntries(Object.entries(responses).map(([status, answer]) => [status, response(route, Number(status), answer)])),
  };
}

function response(route: CodeRoute, status: number, answer: AnswerDescription): Schema {
  const messages = answer.messages?.length ? ` Messages: ${answer.messages.map((message) => `\`${message}\``).join('; ')}.` : '';
  const result: Schema = { description: answer.description + messages };
  if (answer.headers?.length) result.headers = Object.fromEntries(answer.headers.map((name) => [name, { schema: { type: 'string' } }]));
  if (answer.noBody) return result;
  const schema = answer.schema ?? 'Error';
  if (status < 300 && answer.example === undefined) throw new Error(`${route.key} answers ${status} with a body but its description has no example`);
  result.content = { [answer.contentType ?? 'application/json']: { schema: typeof schema === 'string' ? ref(schema) : schema, ...(answer.example === undefined ? {} : { example: answer.example }) } };
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
    additionalConverters: {
      [ValidationTypes.CUSTOM_VALIDATION]: (meta) => customValidationSchema(meta.target, meta.propertyName),
      // `@IsISO8601` takes a date or a date-time. The library's `oneOf` of the two matches no
      // value at all under OpenAPI 3.1, where a format only annotates (both branches accept
      // every string, and oneOf wants exactly one): anyOf says "either".
      [IS_ISO8601]: { anyOf: [{ type: 'string', format: 'date' }, { type: 'string', format: 'date-time' }] },
    },
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
    if (Array.isArray(property.anyOf) && !(property.anyOf as Schema[]).some((option) => option.type === 'null')) property.anyOf = [...(property.anyOf as Schema[]), { type: 'null' }];
  }
  const supplement = BODY_SUPPLEMENTS[dto.name];
  if (supplement) {
    schema.properties = { ...properties, ...(supplement.properties as Record<string, Schema> | undefined) };
    if (supplement.additionalProperties !== undefined) schema.additionalProperties = supplement.additionalProperties;
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
