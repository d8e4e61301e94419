/**
 * A line diff for showing a file edit: the longest common subsequence of lines, as kept, removed
 * and added lines in order. Edits are small (a tool's old and new strings); past a size where the
 * quadratic table would cost too much, the old lines are all shown removed and the new added.
 */
export interface DiffLine {
  op: 'same' | 'removed' | 'added';
  text: string;
}

/** Cells of the LCS table above which a diff is not worth its cost in a browser tab. */
const MAX_CELLS = 4_000_000;

/** A text's lines; a final newline ends the last line rather than starting an empty one. */
function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

export function diffLines(before: string, after: string): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  // Common head and tail cost nothing and shrink the table.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const same = (lines: string[]): DiffLine[] => lines.map((text) => ({ op: 'same', text }));
  return [...same(a.slice(0, head)), ...diffMiddle(midA, midB), ...same(a.slice(a.length - tail))];
}

function diffMiddle(a: string[], b: string[]): DiffLine[] {
  const removed = (text: string): DiffLine => ({ op: 'removed', text });
  const added = (text: string): DiffLine => ({ op: 'added', text });
  if (a.length === 0 || b.length === 0 || (a.length + 1) * (b.length + 1) > MAX_CELLS) return [...a.map(removed), ...b.map(added)];
  // lcs[i][j]: length of the LCS of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lineA = a[i] ?? '';
    const lineB = b[j] ?? '';
    if (lineA === lineB) {
      out.push({ op: 'same', text: lineA });
      i++;
      j++;
    } else if ((lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0)) {
      out.push(removed(lineA));
      i++;
    } else {
      out.push(added(lineB));
      j++;
    }
  }
  return [...out, ...a.slice(i).map(removed), ...b.slice(j).map(added)];
}
