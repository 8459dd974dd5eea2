import { graphsOf, layoutGraph } from './graph-model.js';

const DEFINITION = {
  schemaVersion: 1,
  workflow: {
    start: 'check',
    nodes: {
      check: { type: 'branch', cases: [{ if: 'payload.amount > 0', next: 'ask' }], else: 'refuse' },
      ask: { type: 'approval', title: 'Refund?', next: 'done', onReject: 'refuse' },
      refuse: { type: 'fail', error: 'No amount' },
      done: { type: 'return', value: "{ 'ok': true }", next: 'missing' },
    },
  },
};

describe('graph model', () => {
  it('draws every node and transition (next, branch cases, else, onReject), leaving out a transition to a missing node', () => {
    const placed = layoutGraph(DEFINITION, 'workflow');
    expect(placed.nodes.map((node) => [node.id, node.type, node.isStart])).toEqual([
      ['check', 'branch', true],
      ['ask', 'approval', false],
      ['refuse', 'fail', false],
      ['done', 'return', false],
    ]);
    expect(placed.edges.map((edge) => `${edge.source}->${edge.target}:${edge.label ?? 'next'}`).sort()).toEqual(['ask->done:next', 'ask->refuse:on reject', 'check->ask:case 1', 'check->refuse:else']);
  });

  it('lays the flow out top to bottom: a node sits below the nodes that lead to it', () => {
    const placed = layoutGraph(DEFINITION, 'workflow');
    const y = (id: string) => placed.nodes.find((node) => node.id === id)!.y;
    expect(y('check')).toBeLessThan(y('ask'));
    expect(y('ask')).toBeLessThan(y('done'));
    expect(y('ask')).toBeLessThan(y('refuse'));
  });

  it('names the graphs a document holds and survives text that is not a definition', () => {
    expect(graphsOf(DEFINITION)).toEqual(['workflow']);
    expect(graphsOf({ bot: { nodes: {} }, flow: { nodes: {} } })).toEqual(['bot', 'flow']);
    expect(graphsOf('nothing')).toEqual([]);
    expect(layoutGraph({ workflow: { nodes: { a: 3, b: { next: 'a' } } } }, 'workflow').nodes.map((node) => node.id)).toEqual(['b']);
  });
});
