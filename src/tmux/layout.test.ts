import { describe, expect, it } from 'vitest';
import { closePane, dumpLayout, findPaneCell, layoutChecksum, paneCells, resizePaneTo, singlePaneLayout, splitCell, type LayoutCell } from './layout.js';

function split(root: LayoutCell, pane: number, type: 'leftright' | 'topbottom', id: number, size?: number): LayoutCell {
  const cell = findPaneCell(root, pane);
  if (!cell) throw new Error(`no pane ${pane}`);
  const result = splitCell(root, cell, type, id, { size });
  if (!result) throw new Error('no room');
  return result.root;
}

describe('window layouts', () => {
  // Layout strings as tmux 3.3a printed them for the same splits.
  it('dumps layouts with tmux checksums', () => {
    expect(dumpLayout(singlePaneLayout(0, 80, 24))).toBe('b25d,80x24,0,0,0');
    expect(layoutChecksum('80x24,0,0,0').toString(16)).toBe('b25d');
  });

  it('splits as tmux does: -v -l 10, then -h in the middle, the new pane after its target', () => {
    let root = singlePaneLayout(0, 80, 24);
    root = split(root, 0, 'topbottom', 1, 10);
    root = split(root, 0, 'leftright', 2);
    expect(dumpLayout(root)).toBe('ce31,80x24,0,0[80x13,0,0{40x13,0,0,0,39x13,41,0,2},80x10,0,14,1]');
    expect(paneCells(root).map((c) => c.paneId)).toEqual([0, 2, 1]);
  });

  it('clamps sizes and refuses a split with no room', () => {
    let root = singlePaneLayout(0, 80, 24);
    root = split(root, 0, 'topbottom', 1, 200);
    expect(findPaneCell(root, 1)?.sy).toBe(22);
    const tiny = singlePaneLayout(0, 2, 2);
    expect(splitCell(tiny, tiny, 'topbottom', 1)).toBeUndefined();
  });

  it('gives a closed pane its space back and collapses single-child nodes', () => {
    let root = singlePaneLayout(0, 80, 24);
    root = split(root, 0, 'topbottom', 1, 10);
    root = split(root, 0, 'leftright', 2);
    root = closePane(root, 2) as LayoutCell;
    expect(dumpLayout(root)).toBe(dumpLayout(split(singlePaneLayout(0, 80, 24), 0, 'topbottom', 1, 10)));
    root = closePane(root, 0) as LayoutCell;
    expect(root.paneId).toBe(1);
    expect([root.sx, root.sy, root.xoff, root.yoff]).toEqual([80, 24, 0, 0]);
    expect(closePane(root, 1)).toBeUndefined();
  });

  it('resizes a pane to a width, taking from its neighbour', () => {
    let root = singlePaneLayout(0, 80, 24);
    root = split(root, 0, 'leftright', 1);
    resizePaneTo(root, 0, 'leftright', 50);
    expect([findPaneCell(root, 0)?.sx, findPaneCell(root, 1)?.sx, findPaneCell(root, 1)?.xoff]).toEqual([50, 29, 51]);
  });
});
