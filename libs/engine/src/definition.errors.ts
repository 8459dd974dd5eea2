import { GRAPH_NAMES, type GraphName } from './definition.types.js';

/** One problem found in a definition document. */
export interface DefinitionError {
  /** JSON pointer to the offending value, e.g. `/workflow/nodes/n1/next`; `` is the document. */
  readonly path: string;
  /** The graph the problem is in, when it is inside one. */
  readonly graph?: GraphName;
  /** The node id, when the problem is inside a node. */
  readonly node?: string;
  /** A readable sentence naming the node (or graph, or trigger) and the problem. */
  readonly message: string;
}

/** Thrown by `compileDefinition` when given a document that does not validate. */
export class InvalidDefinitionError extends Error {
  constructor(
    readonly errors: readonly DefinitionError[],
    readonly summary: string = summarizeDefinitionErrors(errors),
  ) {
    super(summary);
    this.name = 'InvalidDefinitionError';
  }
}

/**
 * The one-line message for an HTTP 400, e.g.
 * `Invalid definition: node "n2": next "n9" does not exist (and 2 more problems)`.
 */
export function summarizeDefinitionErrors(errors: readonly DefinitionError[], total = errors.length): string {
  const first = errors[0];
  if (first === undefined) return 'Invalid definition';
  const more = total - 1;
  const tail = more === 0 ? '' : ` (and ${more} more ${more === 1 ? 'problem' : 'problems'})`;
  return `Invalid definition: ${first.message}${tail}`;
}

/** Where in the document a path points, for naming it in messages. */
export interface Location {
  readonly path: string;
  readonly graph?: GraphName;
  readonly node?: string;
  /** `node "n1": `, `workflow trigger: `, `bot graph: ` or `` for the document itself. */
  readonly prefix: string;
  /** The field relative to the node, trigger or graph, e.g. `cases[0].next`; `` for itself. */
  readonly field: string;
}

export function locate(segments: readonly string[]): Location {
  const path = toPointer(segments);
  const [head, second, third] = segments;
  const graph = GRAPH_NAMES.find((name) => name === head);
  if (graph === undefined) return { path, prefix: '', field: formatField(segments) };
  if (second === 'nodes' && third !== undefined) {
    return { path, graph, node: third, prefix: `node "${third}": `, field: formatField(segments.slice(3)) };
  }
  if (second === 'trigger') {
    return { path, graph, prefix: `${graph} trigger: `, field: formatField(segments.slice(2)) };
  }
  return { path, graph, prefix: `${graph} graph: `, field: formatField(segments.slice(1)) };
}

/** Builds an error at `segments` whose message is the location prefix plus `text`. */
export function errorAt(segments: readonly string[], text: string): DefinitionError {
  const { path, graph, node, prefix } = locate(segments);
  return {
    path,
    ...(graph === undefined ? {} : { graph }),
    ...(node === undefined ? {} : { node }),
    message: `${prefix}${text}`,
  };
}

/**
 * Builds an error about the member `key` of the object at `parent` (missing or not allowed),
 * located by the parent: `bot` + `trigger` is a field of the bot graph, not a trigger.
 */
export function errorInside(parent: readonly string[], key: string, text: (field: string) => string): DefinitionError {
  const { graph, node, prefix, field } = locate(parent);
  return {
    path: toPointer([...parent, key]),
    ...(graph === undefined ? {} : { graph }),
    ...(node === undefined ? {} : { node }),
    message: `${prefix}${text(field === '' ? key : `${field}.${key}`)}`,
  };
}

/** `['cases', '0', 'next']` -> `cases[0].next`. */
export function formatField(segments: readonly string[]): string {
  let field = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) field += `[${segment}]`;
    else field = field === '' ? segment : `${field}.${segment}`;
  }
  return field;
}

export function toPointer(segments: readonly string[]): string {
  return segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

export function fromPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}
