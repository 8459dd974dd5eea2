import {
  DEFINITION_LIMITS as L,
  HEADER_NAME_PATTERN,
  NAME_PATTERN,
  NODE_ID_PATTERN,
} from './definition.limits.js';
import { ENROLLMENT_POLICIES, HTTP_METHODS, NODE_TYPES, ON_ERROR_POLICIES, type NodeType } from './definition.types.js';
import { CATCH_UP_POLICIES, OVERLAP_POLICIES, SCHEDULE_ID_PATTERN, SCHEDULE_LIMITS } from './schedules/schedule-definition.types.js';

/**
 * JSON Schema (draft-07 + Ajv's `discriminator`) for the STRUCTURE of schema v1. Cross-field
 * rules (references between nodes, `ask` only in the bot graph, exactly one of `seconds` and
 * `until`, graphs per project type) and expression syntax are checked after it, in code, so
 * each gets a message of its own.
 */

/** Readable wording for each `pattern` used below, for error messages. */
export const PATTERN_HINTS: Readonly<Record<string, string>> = {
  [NODE_ID_PATTERN]: 'letters, digits, "_" and "-", not starting with "-"',
  [NAME_PATTERN]: 'a name of letters, digits and "_", not starting with a digit',
  [HEADER_NAME_PATTERN]: 'a valid HTTP header name',
  '^https://': 'an https:// URL',
};

const expression = { type: 'string', minLength: 1, maxLength: L.maxSourceLength } as const;
const template = { type: 'string', minLength: 1, maxLength: L.maxSourceLength } as const;
const nodeRef = { type: 'string', minLength: 1, maxLength: L.maxNodeIdLength } as const;
const name = { type: 'string', minLength: 1, maxLength: L.maxNameLength, pattern: NAME_PATTERN } as const;

const expressionMap = (minEntries: number) =>
  ({
    type: 'object',
    minProperties: minEntries,
    maxProperties: L.maxMapEntries,
    propertyNames: { maxLength: L.maxNameLength, pattern: NAME_PATTERN },
    additionalProperties: expression,
  }) as const;

/** Fields of each node type besides `type`, and which of them are required. */
const NODE_SHAPES: Readonly<Record<NodeType, { properties: Record<string, object>; required: string[] }>> = {
  message: { properties: { text: template, next: nodeRef }, required: ['text', 'next'] },
  action: {
    properties: {
      name: { type: 'string', minLength: 1, maxLength: L.maxKeyLength },
      params: expressionMap(0),
      next: nodeRef,
    },
    required: ['name', 'next'],
  },
  set: { properties: { values: expressionMap(1), next: nodeRef }, required: ['values', 'next'] },
  branch: {
    properties: {
      cases: {
        type: 'array',
        minItems: 1,
        maxItems: L.maxBranchCases,
        items: {
          type: 'object',
          properties: { if: expression, next: nodeRef },
          required: ['if', 'next'],
          additionalProperties: false,
        },
      },
      else: nodeRef,
    },
    required: ['cases', 'else'],
  },
  http: {
    properties: {
      method: { enum: HTTP_METHODS },
      url: template,
      headers: {
        type: 'object',
        maxProperties: L.maxMapEntries,
        propertyNames: { maxLength: L.maxNameLength, pattern: HEADER_NAME_PATTERN },
        additionalProperties: { type: 'string', maxLength: L.maxSourceLength },
      },
      body: expression,
      saveAs: name,
      next: nodeRef,
    },
    required: ['method', 'url', 'next'],
  },
  wait: {
    properties: {
      seconds: { type: 'number', exclusiveMinimum: 0, maximum: L.maxWaitSeconds },
      until: expression,
      next: nodeRef,
    },
    required: ['next'],
  },
  approval: { properties: { title: template, next: nodeRef, onReject: nodeRef }, required: ['title', 'next'] },
  ask: { properties: { text: template, saveAs: name, next: nodeRef }, required: ['text', 'next'] },
  fail: { properties: { error: template }, required: ['error'] },
  return: { properties: { value: expression }, required: ['value'] },
  end: { properties: {}, required: [] },
};

/** The fields each node type accepts, for "unknown field" messages. */
export function nodeFields(type: NodeType): readonly string[] {
  return Object.keys(NODE_SHAPES[type].properties);
}

const nodeSchema = {
  type: 'object',
  required: ['type'],
  discriminator: { propertyName: 'type' },
  oneOf: NODE_TYPES.map((type) => ({
    properties: { type: { const: type }, ...NODE_SHAPES[type].properties },
    required: ['type', ...NODE_SHAPES[type].required],
    additionalProperties: false,
  })),
};

/**
 * A trigger's `flowControl` (DESIGN section 13), for editors. The validator reports its
 * problems itself, naming the trigger (`workflow.trigger: …`, flow-control.ts), and so takes no
 * errors of Ajv's below it (structure.validator.ts).
 */
const flowKey = { type: 'string', description: 'JSONata over {payload, input}; a key that yields nothing is "".' };
const flowControlSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    concurrency: {
      type: 'array',
      maxItems: 2,
      items: { type: 'object', additionalProperties: false, required: ['limit'], properties: { limit: { type: 'integer', minimum: 1 }, key: flowKey } },
    },
    throttle: {
      type: 'object',
      additionalProperties: false,
      required: ['limit', 'periodSeconds'],
      properties: { limit: { type: 'integer', minimum: 1 }, periodSeconds: { type: 'number', exclusiveMinimum: 0 }, burst: { type: 'integer', minimum: 0 }, key: flowKey },
    },
    debounce: {
      type: 'object',
      additionalProperties: false,
      required: ['periodSeconds'],
      properties: { periodSeconds: { type: 'number', exclusiveMinimum: 0 }, maxWaitSeconds: { type: 'number', exclusiveMinimum: 0 }, key: flowKey },
    },
    priority: { anyOf: [{ type: 'string' }, { type: 'number' }], description: 'Seconds, -600..600: a number or a JSONata expression.' },
  },
};

const triggerSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    externalEnabled: { type: 'boolean' },
    key: { type: 'string', minLength: 1, maxLength: L.maxKeyLength },
    expectedPayload: { type: 'object', maxProperties: L.maxExpectedKeys },
    enrollmentPolicy: { enum: ENROLLMENT_POLICIES },
    enrollmentKey: expression,
    onErrorPolicy: { enum: ON_ERROR_POLICIES },
    callback: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: { type: 'string', maxLength: L.maxUrlLength, pattern: '^https://' },
        secret: { type: 'string', minLength: 1, maxLength: L.maxSecretLength },
      },
    },
    retry: {
      type: 'object',
      additionalProperties: false,
      required: ['maxAttempts', 'backoffSeconds'],
      properties: {
        maxAttempts: { type: 'integer', minimum: 1, maximum: L.maxRetryAttempts },
        backoffSeconds: { type: 'number', minimum: 0, maximum: L.maxBackoffSeconds },
      },
    },
    flowControl: flowControlSchema,
  },
};

/**
 * `workflow.schedules` (DESIGN section 12), for editors: completion and the simple rules. The
 * validator reports problems of schedules itself, each naming its schedule (`Schedule <id>: …`),
 * and so takes no errors of Ajv's below `/workflow/schedules` (structure.validator.ts).
 */
const orNull = (schema: object) => ({ oneOf: [schema, { type: 'null' }] });
const dateTimeOrNull = orNull({
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$',
});
const scheduleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id: { type: 'string', pattern: SCHEDULE_ID_PATTERN, description: 'Unique in the definition: a-z, 0-9 and "-", 1 to 64 characters.' },
    cron: { ...orNull({ type: 'string', minLength: 1 }), description: '5 fields, or 6 with seconds first, in `timezone`. Not with `every`.' },
    every: { ...orNull({ type: 'string', pattern: '^[1-9][0-9]{0,9}[smhd]$' }), description: 'An interval of elapsed time, 1s to 31d: "30s", "15m", "2h", "1d". Not with `cron`.' },
    timezone: { type: 'string', minLength: 1, description: 'IANA time zone of `cron` (default "UTC"); ignored by `every`.' },
    payload: { type: 'object', description: "The run's payload (default {})." },
    overlap: { enum: OVERLAP_POLICIES, description: "While the schedule's previous run is not final: SKIP (default), BUFFER_ONE or ALLOW." },
    catchUp: { enum: CATCH_UP_POLICIES, description: 'Fires missed while no scheduler ran: NONE, LATEST (default) or ALL, within catchUpWindowSeconds.' },
    catchUpWindowSeconds: { type: 'integer', minimum: 1, maximum: SCHEDULE_LIMITS.maxCatchUpWindowSeconds },
    jitterSeconds: { type: 'integer', minimum: 0, maximum: SCHEDULE_LIMITS.maxJitterSeconds },
    startAt: dateTimeOrNull,
    endAt: dateTimeOrNull,
    enabled: { type: 'boolean' },
  },
} as const;

const graphSchema = (withTrigger: boolean, withSchedules = false) => ({
  type: 'object',
  additionalProperties: false,
  required: ['start', 'nodes'],
  properties: {
    start: nodeRef,
    nodes: {
      type: 'object',
      minProperties: 1,
      maxProperties: L.maxNodesPerGraph,
      propertyNames: { maxLength: L.maxNodeIdLength, pattern: NODE_ID_PATTERN },
      additionalProperties: { $ref: '#/$defs/node' },
    },
    ...(withTrigger ? { trigger: { $ref: '#/$defs/trigger' } } : {}),
    ...(withSchedules ? { schedules: { type: 'array', maxItems: SCHEDULE_LIMITS.maxSchedules, items: { $ref: '#/$defs/schedule' } } } : {}),
  },
});

/** The v1 document. Which graphs a project type needs is checked afterwards. */
export const DEFINITION_SCHEMA_V1 = {
  $id: 'https://runline.dev/schemas/definition/v1.json',
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion'],
  properties: {
    schemaVersion: { const: 1 },
    bot: graphSchema(false),
    flow: graphSchema(true),
    workflow: graphSchema(true, true),
  },
  $defs: { node: nodeSchema, trigger: triggerSchema, schedule: scheduleSchema },
};
