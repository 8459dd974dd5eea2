import { Ajv, type ErrorObject } from 'ajv';

import { errorAt, errorInside, fromPointer, locate, type DefinitionError, type Location } from './definition.errors.js';
import { DEFINITION_LIMITS } from './definition.limits.js';
import { DEFINITION_SCHEMA_V1, PATTERN_HINTS, nodeFields } from './definition.schema.js';
import { NODE_TYPES } from './definition.types.js';

// verbose: errors carry the offending data, which the messages quote.
const ajv = new Ajv({ allErrors: true, discriminator: true, verbose: true, strict: true, strictRequired: false });
const validateSchemaV1 = ajv.compile(DEFINITION_SCHEMA_V1);
const SCHEDULES_POINTER = '/workflow/schedules';
/** `flowControl` is checked by compileFlowControl, whose messages name the trigger. */
const FLOW_CONTROL_POINTER = /^\/(flow|workflow)\/trigger\/flowControl(\/|$)/;

/** Checks `document` against the v1 JSON Schema; every Ajv error becomes a readable one. */
export function checkStructure(document: unknown): DefinitionError[] {
  if (validateSchemaV1(document)) return [];
  const errors: DefinitionError[] = [];
  const seen = new Set<string>();
  for (const raw of validateSchemaV1.errors ?? []) {
    // Schedules are checked by checkSchedules, whose messages name the schedule.
    if (raw.instancePath === SCHEDULES_POINTER || raw.instancePath.startsWith(`${SCHEDULES_POINTER}/`)) continue;
    if (FLOW_CONTROL_POINTER.test(raw.instancePath)) continue;
    const error = translate(raw);
    if (error === undefined) continue;
    const key = `${error.path}\n${error.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(error);
  }
  return errors;
}

function translate(error: ErrorObject): DefinitionError | undefined {
  const segments = fromPointer(error.instancePath);
  const here = locate(segments);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params['missingProperty']);
      if (here.node !== undefined && here.field === '' && missing === 'type') {
        return errorAt(segments, `type is required (one of ${NODE_TYPES.join(', ')})`);
      }
      return errorInside(segments, missing, (field) => `${field} is required`);
    }
    case 'additionalProperties': {
      const extra = String(params['additionalProperty']);
      return errorInside(segments, extra, (field) => `unknown field "${field}"${allowedFieldsHint(here, error.data)}`);
    }
    case 'propertyNames':
      // Ajv reports the failing inner keyword (with `propertyName`) as well; that one is used.
      return undefined;
    case 'discriminator':
      return translateDiscriminator(segments, params);
    case 'type':
      return errorAt(segments, `${subject(here)} must be ${withArticle(String(params['type']))}`);
    case 'const':
      return errorAt(segments, `${subject(here)} must be ${JSON.stringify(params['allowedValue'])}`);
    case 'enum': {
      const allowed = (params['allowedValues'] as unknown[]).map(String).join(', ');
      return errorAt(segments, `${subject(here)} must be one of ${allowed} (got ${JSON.stringify(error.data)})`);
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return errorAt(segments, `${subject(here)} must be ${String(params['comparison'])} ${String(params['limit'])}`);
    case 'minLength':
    case 'maxLength':
    case 'pattern':
      return translateString(error, segments);
    case 'minProperties':
    case 'minItems':
      return errorAt(segments, `${subject(here)} must not be empty`);
    case 'maxProperties':
    case 'maxItems':
      return errorAt(segments, tooMany(here, Number(params['limit']), countOf(error.data)));
    default:
      return errorAt(segments, `${subject(here)} ${error.message ?? 'is invalid'}`);
  }
}

function translateDiscriminator(segments: string[], params: Record<string, unknown>): DefinitionError | undefined {
  const tagValue = params['tagValue'];
  if (params['error'] === 'mapping') {
    return errorAt(
      [...segments, 'type'],
      `unknown node type ${JSON.stringify(tagValue)} (expected one of ${NODE_TYPES.join(', ')})`,
    );
  }
  // A missing tag is already reported by `required`.
  if (tagValue === undefined) return undefined;
  return errorAt([...segments, 'type'], `type must be a string (one of ${NODE_TYPES.join(', ')})`);
}

/** String limits apply to values and, under `propertyNames`, to keys (node ids, names). */
function translateString(error: ErrorObject, segments: string[]): DefinitionError {
  const requirement = stringRequirement(error);
  const location = locate(segments);
  const key = error.propertyName;
  if (key === undefined) return errorAt(segments, `${subject(location)} ${requirement}`);
  // The key is a node id: name the node by it.
  const inner = [...segments, key];
  if (location.node === undefined && location.field === 'nodes') return errorAt(inner, `node id ${requirement}`);
  return errorAt(inner, `${subject(location)} has an invalid name ${JSON.stringify(key)}: ${requirement}`);
}

function stringRequirement(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const limit = Number(params['limit']);
  if (error.keyword === 'maxLength') return `must be at most ${limit} characters long`;
  if (error.keyword === 'minLength') {
    return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`;
  }
  if ((error.propertyName ?? error.data) === '__proto__') return 'must not be "__proto__"';
  const pattern = String(params['pattern']);
  return `must be ${PATTERN_HINTS[pattern] ?? `match ${pattern}`}`;
}

function allowedFieldsHint(location: Location, data: unknown): string {
  if (location.node === undefined || location.field !== '' || !isRecord(data)) return '';
  const type = NODE_TYPES.find((candidate) => candidate === data['type']);
  if (type === undefined) return '';
  const fields = nodeFields(type);
  return fields.length === 0
    ? ` (${withArticle(type)} node has no fields besides type)`
    : ` (${withArticle(type)} node has ${fields.join(', ')})`;
}

function tooMany(location: Location, limit: number, count: number | undefined): string {
  const got = count === undefined ? '' : ` (has ${count})`;
  if (location.node === undefined && location.field === 'nodes') {
    return `has more than ${DEFINITION_LIMITS.maxNodesPerGraph} nodes${got}`;
  }
  return `${subject(location)} has more than ${limit} entries${got}`;
}

/** What a message calls the value at a location when it has no field name of its own. */
function subject(location: Location): string {
  if (location.field !== '') return location.field;
  if (location.node !== undefined) return 'the node';
  if (location.prefix.endsWith('trigger: ')) return 'the trigger';
  if (location.graph !== undefined) return 'the graph';
  return 'the definition';
}

function withArticle(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`;
}

function countOf(data: unknown): number | undefined {
  if (Array.isArray(data)) return data.length;
  if (isRecord(data)) return Object.keys(data).length;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
