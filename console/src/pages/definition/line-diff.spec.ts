import { foldUnchanged, lineDiff } from './line-diff.js';

describe('lineDiff', () => {
  it('marks removed and added lines with their numbers, keeping the common ones', () => {
    const diff = lineDiff('a\nb\nc\nd', 'a\nB\nc\nd\ne');
    expect(diff.map((line) => `${line.kind[0]}${line.text}`)).toEqual(['sa', 'rb', 'aB', 'sc', 'sd', 'ae']);
    expect(diff.find((line) => line.text === 'e')).toEqual({ kind: 'added', text: 'e', oldLine: null, newLine: 5 });
    expect(diff.find((line) => line.text === 'b')).toEqual({ kind: 'removed', text: 'b', oldLine: 2, newLine: null });
  });

  it('finds no change in equal texts, and folds unchanged runs away from changes', () => {
    expect(lineDiff('x\ny', 'x\ny').every((line) => line.kind === 'same')).toBe(true);
    const text = Array.from({ length: 20 }, (_, index) => `line ${index}`);
    const changed = [...text];
    changed[10] = 'changed';
    const folded = foldUnchanged(lineDiff(text.join('\n'), changed.join('\n')), 2);
    expect(folded.map((line) => (line === null ? '…' : line.text))).toEqual(['…', 'line 8', 'line 9', 'line 10', 'changed', 'line 11', 'line 12', '…']);
  });
});
