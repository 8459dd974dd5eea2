/**
 * The definition's JSON schema as the gateway serves it (`GET …/definition/schema`, built from
 * libs/engine), read for the editor: which keys and values fit where, and a structural check
 * of a document with messages worded like the save's. The save stays the judge (references
 * between nodes and expressions are checked there too); this only finds the common mistakes
 * while typing, at their line.
 */
export type JsonSchema = {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  discriminator?: { propertyName: string };
  enum?: unknown[];
  const?: unknown;
  description?: string;
};

export interface DefinitionSchemaInfo {
  requiredGraphs: string[];
  optionalGraphs: string[];
  starterDefinition: Record<string, unknown>;
  schema: JsonSchema;
}

/** A problem found in the document: where (the JSON path) and what. */
export interface Problem {
  path: string[];
  message: string;
  /** The problem is the key itself (an unknown field), not its value. */
  atKey?: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Node ids in transitions, per node: what `next`-like fields and branch cases point to. */
const TRANSITION_FIELDS = ['next', 'else', 'onReject'] as const;

export class SchemaIndex {
  constructor(readonly info: DefinitionSchemaInfo) {}

  private resolve(schema: JsonSchema | undefined): JsonSchema | undefined {
    let current = schema;
    for (let depth = 0; current?.$ref && depth < 10; depth++) current = this.info.schema.$defs?.[current.$ref.split('/').pop()!];
    return current;
  }

  /** The node schema's variants: one per node type. */
  get nodeVariants(): JsonSchema[] {
    return this.resolve({ $ref: '#/$defs/node' })?.oneOf ?? [];
  }

  get nodeTypes(): string[] {
    return this.nodeVariants.map((variant) => String(variant.properties?.type?.const));
  }

  /** A schema with alternatives narrowed by the value that is there (a node by its `type`; `x or null` to x). */
  private narrow(schema: JsonSchema | undefined, value: unknown): JsonSchema | undefined {
    const resolved = this.resolve(schema);
    if (!resolved?.oneOf) return resolved;
    if (resolved.discriminator) {
      const key = resolved.discriminator.propertyName;
      const type = isObject(value) ? value[key] : undefined;
      return resolved.oneOf.find((variant) => variant.properties?.[key]?.const === type) ?? { properties: { [key]: { enum: resolved.oneOf.map((variant) => variant.properties?.[key]?.const) } }, required: [key] };
    }
    return this.resolve(resolved.oneOf.find((variant) => variant.type !== 'null')) ?? resolved;
  }

  /** The schema at `path` in `document` (a best-effort parse of what is typed), narrowed by what is there. */
  schemaAt(document: unknown, path: readonly string[]): JsonSchema | undefined {
    let schema = this.narrow(this.info.schema, document);
    let value: unknown = document;
    for (const segment of path) {
      if (!schema) return undefined;
      const next: unknown = Array.isArray(value) ? value[Number(segment)] : isObject(value) ? value[segment] : undefined;
      const child = schema.items ?? schema.properties?.[segment] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      schema = this.narrow(child, next);
      value = next;
    }
    return schema;
  }

  /** The keys an object at `path` may hold, with what each is; the graphs the project type does not take are left out. */
  keysAt(document: unknown, path: readonly string[]): Array<{ key: string; detail?: string }> {
    const schema = this.schemaAt(document, path);
    if (!schema?.properties) return [];
    let keys = Object.keys(schema.properties);
    if (path.length === 0) keys = keys.filter((key) => key === 'schemaVersion' || this.graphsAllowed.includes(key));
    return keys.map((key) => ({ key, detail: schema.properties![key]!.description }));
  }

  /** The values that fit at `path` when the schema fixes them (an enum, a constant). */
  valuesAt(document: unknown, path: readonly string[]): unknown[] {
    const schema = this.schemaAt(document, path);
    if (!schema) return [];
    if (schema.enum) return schema.enum;
    if ('const' in schema) return [schema.const];
    return [];
  }

  get graphsAllowed(): string[] {
    return [...this.info.requiredGraphs, ...this.info.optionalGraphs];
  }

  /** The structural problems of a parsed document, and transitions to nodes that do not exist. */
  check(document: unknown): Problem[] {
    const problems: Problem[] = [];
    this.walk(document, this.info.schema, [], problems);
    if (isObject(document)) {
      for (const graph of this.info.requiredGraphs) if (!(graph in document)) problems.push({ path: [], message: `missing the ${graph} graph (a ${this.projectKind} needs it)` });
      for (const key of Object.keys(document)) {
        if (key !== 'schemaVersion' && key in (this.info.schema.properties ?? {}) && !this.graphsAllowed.includes(key)) {
          problems.push({ path: [key], atKey: true, message: `a ${this.projectKind} has no ${key} graph (it takes ${this.graphsAllowed.join(' and ')})` });
        }
      }
      for (const graph of this.graphsAllowed) this.checkTransitions(document[graph], graph, problems);
    }
    return problems;
  }

  private get projectKind(): string {
    return this.info.requiredGraphs.includes('workflow') ? 'automation' : 'chatbot';
  }

  private checkTransitions(graph: unknown, name: string, problems: Problem[]) {
    if (!isObject(graph) || !isObject(graph.nodes)) return;
    const nodes = graph.nodes;
    if (typeof graph.start === 'string' && !(graph.start in nodes)) problems.push({ path: [name, 'start'], message: `${name} graph: start "${graph.start}" does not exist` });
    for (const [id, node] of Object.entries(nodes)) {
      if (!isObject(node)) continue;
      for (const field of TRANSITION_FIELDS) {
        const target = node[field];
        if (typeof target === 'string' && !(target in nodes)) problems.push({ path: [name, 'nodes', id, field], message: `node "${id}": ${field} "${target}" does not exist` });
      }
      if (Array.isArray(node.cases)) {
        node.cases.forEach((branch, index) => {
          if (isObject(branch) && typeof branch.next === 'string' && !(branch.next in nodes)) {
            problems.push({ path: [name, 'nodes', id, 'cases', String(index), 'next'], message: `node "${id}": cases[${index}].next "${branch.next}" does not exist` });
          }
        });
      }
    }
  }

  private walk(value: unknown, schemaIn: JsonSchema | undefined, path: string[], problems: Problem[]) {
    const where = locationOf(path);
    const resolved = this.resolve(schemaIn);
    if (!resolved) return;
    if (resolved.discriminator && resolved.oneOf) {
      const key = resolved.discriminator.propertyName;
      if (!isObject(value)) return void problems.push({ path, message: `${where}must be an object` });
      const types = resolved.oneOf.map((variant) => String(variant.properties?.[key]?.const));
      if (!(key in value)) return void problems.push({ path, message: `${where}missing field "${key}" (one of: ${types.join(', ')})` });
      if (!types.includes(String(value[key]))) return void problems.push({ path: [...path, key], message: `${where}unknown node type "${String(value[key])}" (one of: ${types.join(', ')})` });
    }
    const schema = this.narrow(resolved, value);
    if (!schema) return;
    if (schema.oneOf && value === null) return;
    if ('const' in schema && value !== schema.const) return void problems.push({ path, message: `${where}must be ${JSON.stringify(schema.const)}` });
    if (schema.enum && !schema.enum.includes(value)) return void problems.push({ path, message: `${where}must be one of: ${schema.enum.join(', ')}` });
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    const typeProblem = type ? wrongType(value, type) : null;
    if (typeProblem) return void problems.push({ path, message: `${where}${typeProblem}` });
    if (Array.isArray(value) && schema.items) value.forEach((item, index) => this.walk(item, schema.items, [...path, String(index)], problems));
    if (isObject(value) && (schema.properties || schema.additionalProperties !== undefined)) {
      for (const key of schema.required ?? []) if (!(key in value)) problems.push({ path, message: `${where}missing field "${key}"` });
      for (const [key, child] of Object.entries(value)) {
        const childSchema = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
        if (childSchema) this.walk(child, childSchema, [...path, key], problems);
        else if (schema.additionalProperties === false && schema.properties) {
          problems.push({ path: [...path, key], atKey: true, message: `${where}unknown field "${key}" (allowed: ${Object.keys(schema.properties).join(', ')})` });
        }
      }
    }
  }
}

function wrongType(value: unknown, type: string): string | null {
  const fits =
    type === 'object' ? isObject(value) : type === 'array' ? Array.isArray(value) : type === 'integer' ? Number.isInteger(value) : type === 'null' ? value === null : typeof value === type;
  return fits ? null : `must be ${type === 'integer' || type === 'array' || type === 'object' ? 'an' : 'a'} ${type}`;
}

/** `node "n1": `, `workflow trigger: `, `workflow graph: `: the save's way of naming where. */
export function locationOf(path: readonly string[]): string {
  const [graph, second, third] = path;
  if (graph === undefined) return '';
  if (second === 'nodes' && third !== undefined) return `node "${third}": ${fieldOf(path.slice(3))}`;
  if (second === 'trigger') return `${graph} trigger: ${fieldOf(path.slice(2))}`;
  if (path.length === 1) return `${graph}: `;
  return `${graph} graph: ${fieldOf(path.slice(1))}`;
}

function fieldOf(segments: readonly string[]): string {
  if (segments.length === 0) return '';
  return `${segments.map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('')} `;
}

/** `/workflow/nodes/n1/next` → ['workflow', 'nodes', 'n1', 'next']. */
export function pathOfPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The node a problem is in, for marking it on the graph: `[graph, 'nodes', id, …]`. */
export function nodeOfPath(path: readonly string[]): { graph: string; node: string } | null {
  return path[1] === 'nodes' && path[2] !== undefined ? { graph: path[0]!, node: path[2] } : null;
}
