/** One line of a diff: kept, removed (only in the old text) or added (only in the new). */
export interface DiffLine {
  kind: 'same' | 'removed' | 'added';
  text: string;
  /** Line numbers in the old and the new text (null where the line is not in it). */
  oldLine: number | null;
  newLine: number | null;
}

/** Lines of each text beyond which the diff gives up on aligning (a definition is far smaller). */
const MAX_LINES = 6000;

/**
 * A line diff (longest common subsequence) of two texts, with `context` unchanged lines kept
 * around each change and the rest folded into a `…` marker (kind 'same', text null-like '…').
 */
export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [...a.map((text, index) => ({ kind: 'removed' as const, text, oldLine: index + 1, newLine: null })), ...b.map((text, index) => ({ kind: 'added' as const, text, oldLine: null, newLine: index + 1 }))];
  }
  // Trim the common head and tail first: most edits touch a few lines.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const lengths: Uint32Array[] = midA.map(() => new Uint32Array(midB.length + 1));
  lengths.push(new Uint32Array(midB.length + 1));
  for (let i = midA.length - 1; i >= 0; i--) {
    for (let j = midB.length - 1; j >= 0; j--) {
      lengths[i]![j] = midA[i] === midB[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const lines: DiffLine[] = a.slice(0, head).map((text, index) => ({ kind: 'same', text, oldLine: index + 1, newLine: index + 1 }));
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      lines.push({ kind: 'same', text: midA[i]!, oldLine: head + i + 1, newLine: head + j + 1 });
      i++;
      j++;
    } else if (i < midA.length && (j >= midB.length || lengths[i + 1]![j]! >= lengths[i]![j + 1]!)) {
      // On a tie the removed line comes first, as diffs read.
      lines.push({ kind: 'removed', text: midA[i]!, oldLine: head + i + 1, newLine: null });
      i++;
    } else {
      lines.push({ kind: 'added', text: midB[j]!, oldLine: null, newLine: head + j + 1 });
      j++;
    }
  }
  for (let k = 0; k < tail; k++) lines.push({ kind: 'same', text: a[a.length - tail + k]!, oldLine: a.length - tail + k + 1, newLine: b.length - tail + k + 1 });
  return lines;
}

/** The changed lines with `context` lines around each change; runs of unchanged lines between become one `null` (a fold). */
export function foldUnchanged(lines: DiffLine[], context = 2): Array<DiffLine | null> {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind === 'same') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++) keep[k] = true;
  });
  const folded: Array<DiffLine | null> = [];
  lines.forEach((line, index) => {
    if (keep[index]) folded.push(line);
    else if (folded.at(-1) !== null) folded.push(null);
  });
  return folded;
}
