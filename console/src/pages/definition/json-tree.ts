import { syntaxTree } from '@codemirror/language';
import type { EditorState } from '@codemirror/state';
import type { SyntaxNode } from '@lezer/common';

/**
 * Where things are in the editor's JSON text, through its syntax tree (@codemirror/lang-json's
 * Lezer parser, which keeps a tree even while the text does not parse).
 */

const VALUE_NODES = new Set(['Object', 'Array', 'String', 'Number', 'True', 'False', 'Null']);

function nameOf(state: EditorState, node: SyntaxNode): string {
  const raw = state.sliceDoc(node.from, node.to);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return raw.replace(/^"|"$/g, '');
  }
}

function valueOfProperty(property: SyntaxNode): SyntaxNode | null {
  for (let child = property.lastChild; child; child = child.prevSibling) if (VALUE_NODES.has(child.name)) return child.name === 'PropertyName' ? null : child;
  return null;
}

function valuesOf(array: SyntaxNode): SyntaxNode[] {
  const values: SyntaxNode[] = [];
  for (let child = array.firstChild; child; child = child.nextSibling) if (VALUE_NODES.has(child.name)) values.push(child);
  return values;
}

/**
 * The text range of `path` (JSON path segments): the key's line for a property (the key itself
 * when `atKey`, or when the value spans lines), else the value. A path that goes further than
 * the text does stops at the deepest part there is (a missing field points at its object).
 */
export function rangeOfPath(state: EditorState, path: readonly string[], atKey = false): { from: number; to: number } {
  const top = syntaxTree(state).topNode;
  let current: SyntaxNode | null = top.firstChild && VALUE_NODES.has(top.firstChild.name) ? top.firstChild : null;
  let key: SyntaxNode | null = null;
  if (!current) return { from: 0, to: Math.min(1, state.doc.length) };
  for (const segment of path) {
    let next: SyntaxNode | null = null;
    let nextKey: SyntaxNode | null = null;
    if (current.name === 'Object') {
      for (let property: SyntaxNode | null = current.firstChild; property; property = property.nextSibling) {
        if (property.name !== 'Property') continue;
        const name = property.getChild('PropertyName');
        if (name && nameOf(state, name) === segment) {
          nextKey = name;
          next = valueOfProperty(property) ?? name;
        }
      }
    } else if (current.name === 'Array') {
      next = valuesOf(current)[Number(segment)] ?? null;
    }
    if (!next) break;
    current = next;
    key = nextKey;
  }
  const multiLine = state.doc.lineAt(current.from).number !== state.doc.lineAt(current.to).number;
  if (key && (atKey || multiLine)) return { from: key.from, to: key.to };
  if (multiLine) return { from: current.from, to: current.from + 1 };
  return { from: current.from, to: current.to };
}

/** What the cursor is on, for completion: a key of the object at `path`, or the value of `path`. */
export type CursorPlace =
  | { kind: 'key'; path: string[]; from: number; to: number; quoted: boolean }
  | { kind: 'value'; path: string[]; from: number; to: number; quoted: boolean };

/** The JSON path of a node: the property names and array indexes above it. */
function pathOf(state: EditorState, node: SyntaxNode): string[] {
  const path: string[] = [];
  let child: SyntaxNode = node;
  for (let parent = node.parent; parent; child = parent, parent = parent.parent) {
    if (parent.name === 'Property') {
      const name = parent.getChild('PropertyName');
      if (name && child !== name) path.unshift(nameOf(state, name));
    } else if (parent.name === 'Array') {
      const index = valuesOf(parent).findIndex((value) => value.from === child.from);
      path.unshift(String(Math.max(0, index)));
    }
  }
  return path;
}

export function placeAt(state: EditorState, pos: number): CursorPlace | null {
  const node = syntaxTree(state).resolveInner(pos, -1);
  if (node.name === 'PropertyName') return { kind: 'key', path: pathOf(state, node.parent?.parent ?? node), from: node.from, to: node.to, quoted: true };
  if (node.name === 'Object' || (node.name === '{' && node.parent?.name === 'Object') || (node.name === ',' && node.parent?.name === 'Object')) {
    const object = node.name === 'Object' ? node : node.parent!;
    return { kind: 'key', path: pathOf(state, object), from: pos, to: pos, quoted: false };
  }
  if (node.name === '⚠' && node.parent?.name === 'Object') {
    // A key being typed before its colon: the parser keeps it as an error inside the object.
    return { kind: 'key', path: pathOf(state, node.parent), from: node.from, to: node.to, quoted: state.sliceDoc(node.from, node.from + 1) === '"' };
  }
  const property = node.parent?.name === 'Property' ? node.parent : node.name === ':' ? node.parent : node.name === 'Property' ? node : null;
  if (property && property.name === 'Property') {
    const name = property.getChild('PropertyName');
    if (!name) return null;
    const isValue = node.name === 'String' || node.name === 'Number' || node.name === 'True' || node.name === 'False' || node.name === 'Null';
    const from = isValue ? node.from : pos;
    const to = isValue ? node.to : pos;
    return { kind: 'value', path: [...pathOf(state, property), nameOf(state, name)], from, to, quoted: isValue && node.name === 'String' };
  }
  return null;
}

/** The keys of the object at `path` in the text (node ids of a graph's `nodes`, while it does not parse too). */
export function keysAtPath(state: EditorState, path: readonly string[]): string[] {
  const top = syntaxTree(state).topNode;
  let current: SyntaxNode | null = top.firstChild;
  for (const segment of path) {
    if (!current || current.name !== 'Object') return [];
    let next: SyntaxNode | null = null;
    for (let property = current.firstChild; property; property = property.nextSibling) {
      const name = property.name === 'Property' ? property.getChild('PropertyName') : null;
      if (name && nameOf(state, name) === segment) next = valueOfProperty(property);
    }
    current = next;
  }
  if (!current || current.name !== 'Object') return [];
  const keys: string[] = [];
  for (let property = current.firstChild; property; property = property.nextSibling) {
    const name = property.name === 'Property' ? property.getChild('PropertyName') : null;
    if (name) keys.push(nameOf(state, name));
  }
  return keys;
}
