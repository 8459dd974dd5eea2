import { analyzeDefinition, type CompiledDefinition } from './definition.compiler.js';
import { errorAt, locate, summarizeDefinitionErrors, type DefinitionError } from './definition.errors.js';
import { DEFINITION_LIMITS } from './definition.limits.js';
import {
  PROJECT_TYPES,
  SCHEMA_VERSION,
  type Definition,
  type DefinitionDocument,
  type ProjectType,
} from './definition.types.js';
import { checkSchedulePlacement, checkSchedules } from './schedules/schedule-definition.validator.js';
import { checkStructure } from './structure.validator.js';

export type DefinitionValidation =
  | { readonly ok: true; readonly definition: Definition; readonly compiled: CompiledDefinition }
  | { readonly ok: false; readonly errors: readonly DefinitionError[]; readonly summary: string };

/**
 * Validates a definition document for a project type, in stages; each stage runs only when the
 * ones before it passed, so a broken document gets the errors that matter and not their echoes:
 * 1. the document is a JSON object within the size and depth limits;
 * 2. `schemaVersion` is 1, and schedules only in an automation's `workflow.schedules`;
 * 3. structure (JSON Schema v1, every problem reported);
 * 4. graphs allowed for the project type, references between nodes, `ask` only in the bot
 *    graph, `wait` with exactly one of `seconds` and `until`, URLs, every expression and
 *    template compiled, and each schedule (`Schedule <id>: …`).
 * At most DEFINITION_LIMITS.maxReportedErrors errors are returned; the summary counts all.
 */
export function validateDefinition(projectType: ProjectType, document: unknown): DefinitionValidation {
  if (!PROJECT_TYPES.includes(projectType)) {
    return invalid([{ path: '', message: `project type ${JSON.stringify(projectType)} has no definition` }]);
  }
  const shapeErrors = checkDocument(document);
  if (shapeErrors.length > 0) return invalid(shapeErrors);

  const placementErrors = checkSchedulePlacement(projectType === 'CHATBOT', document as Record<string, unknown>);
  if (placementErrors.length > 0) return invalid(placementErrors);

  const structureErrors = checkStructure(document);
  if (structureErrors.length > 0) return invalid(structureErrors);

  // The schema has accepted the document, so it has the shape of a v1 document; which graphs
  // it has is checked by analyzeDefinition.
  const { compiled, errors } = analyzeDefinition(projectType, document as DefinitionDocument);
  errors.push(...checkSchedules((document as DefinitionDocument).workflow?.schedules));
  if (errors.length > 0) return invalid(errors);
  return { ok: true, definition: compiled.definition, compiled };
}

function invalid(errors: readonly DefinitionError[]): DefinitionValidation {
  const reported = errors.slice(0, DEFINITION_LIMITS.maxReportedErrors);
  return { ok: false, errors: reported, summary: summarizeDefinitionErrors(reported, errors.length) };
}

/** Stages 1 and 2: a JSON object, not too deep, not too big, of schema version 1. */
function checkDocument(document: unknown): DefinitionError[] {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    return [{ path: '', message: 'the definition must be a JSON object' }];
  }
  const jsonError = checkJsonValue(document);
  if (jsonError !== undefined) return [jsonError];

  const bytes = Buffer.byteLength(JSON.stringify(document), 'utf8');
  if (bytes > DEFINITION_LIMITS.maxDocumentBytes) {
    return [
      {
        path: '',
        message: `the definition is ${bytes} bytes; at most ${DEFINITION_LIMITS.maxDocumentBytes} bytes are allowed`,
      },
    ];
  }

  const version: unknown = (document as Record<string, unknown>)['schemaVersion'];
  if (version === undefined) {
    const message = `schemaVersion is required (the current version is ${SCHEMA_VERSION})`;
    return [{ path: '/schemaVersion', message }];
  }
  if (version !== SCHEMA_VERSION) {
    const message = `schemaVersion ${JSON.stringify(version)} is not supported (use ${SCHEMA_VERSION})`;
    return [{ path: '/schemaVersion', message }];
  }
  return [];
}

/**
 * Walks the document without recursion: only plain JSON values, nested at most maxDepth deep,
 * and no more values than could fit in maxDocumentBytes (so the walk itself stays cheap).
 */
function checkJsonValue(root: object): DefinitionError | undefined {
  const maxValues = DEFINITION_LIMITS.maxDocumentBytes / 2;
  const pending: { value: unknown; path: string[] }[] = [{ value: root, path: [] }];
  let visited = 0;
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    visited += 1;
    if (visited > maxValues) {
      return { path: '', message: `the definition is larger than ${DEFINITION_LIMITS.maxDocumentBytes} bytes` };
    }
    const { value, path } = item;
    // undefined is what JSON.stringify drops and what the schema treats as absent.
    if (value === undefined || value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (Number.isFinite(value)) continue;
      return errorAt(path, `${describe(path)} is not a JSON value (${String(value)})`);
    }
    if (!isPlainContainer(value)) return errorAt(path, `${describe(path)} is not a JSON value`);
    if (path.length >= DEFINITION_LIMITS.maxDepth) {
      return errorAt(path, `${describe(path)} is nested more than ${DEFINITION_LIMITS.maxDepth} levels deep`);
    }
    for (const [key, child] of Object.entries(value)) pending.push({ value: child, path: [...path, key] });
  }
  return undefined;
}

function isPlainContainer(value: unknown): value is object {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(path: readonly string[]): string {
  const { field } = locate(path);
  if (field !== '') return field;
  return path.length === 0 ? 'the definition' : 'the value';
}
