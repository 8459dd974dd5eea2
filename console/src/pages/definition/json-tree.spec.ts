import { json } from '@codemirror/lang-json';
import { ensureSyntaxTree } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { keysAtPath, placeAt, rangeOfPath } from './json-tree.js';

const TEXT = '{\n  "schemaVersion": 1,\n  "workflow": {\n    "start": "n1",\n    "nodes": {\n      "n1": { "type": "", "next": "n2" },\n      "n2": { "type": "end" }\n    }\n  }\n}';

function stateOf(text: string): EditorState {
  const state = EditorState.create({ doc: text, extensions: [json()] });
  ensureSyntaxTree(state, state.doc.length, 5000);
  return state;
}

describe('json-tree', () => {
  const state = stateOf(TEXT);

  it('names the value under the cursor by its path', () => {
    const inType = TEXT.indexOf('"type": ""') + '"type": "'.length;
    expect(placeAt(state, inType)).toMatchObject({ kind: 'value', path: ['workflow', 'nodes', 'n1', 'type'], quoted: true });
  });

  it('names a key being typed by the path of its object', () => {
    const inKey = TEXT.indexOf('"next"') + 2;
    expect(placeAt(state, inKey)).toMatchObject({ kind: 'key', path: ['workflow', 'nodes', 'n1'] });
  });

  it('finds the line of a path, stopping at the deepest part present', () => {
    const line = (path: string[]) => state.doc.lineAt(rangeOfPath(state, path).from).number;
    expect(line(['workflow', 'nodes', 'n1', 'next'])).toBe(6);
    expect(line(['workflow', 'nodes', 'n2', 'missing'])).toBe(7);
    expect(line(['workflow', 'start'])).toBe(4);
  });

  it('lists the node ids of a graph', () => {
    expect(keysAtPath(state, ['workflow', 'nodes'])).toEqual(['n1', 'n2']);
  });
});
