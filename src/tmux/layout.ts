/**
 * A window's layout as tmux keeps it: a tree of cells, each a pane or a row/column of cells, with
 * sizes and offsets in character cells and one-cell borders between siblings. Splitting, closing
 * and resizing follow tmux 3.3's arithmetic, so pane sizes, offsets and `#{window_layout}` (with
 * its checksum) come out as tmux's do.
 */

/** Smallest pane, in rows or columns. */
const PANE_MINIMUM = 1;

export type LayoutType = 'leftright' | 'topbottom' | 'pane';

/** One cell: a pane (`paneId` set) or a node whose children run left-right or top-bottom. */
export class LayoutCell {
  type: LayoutType = 'pane';
  parent: LayoutCell | undefined;
  children: LayoutCell[] = [];
  sx = 0;
  sy = 0;
  xoff = 0;
  yoff = 0;
  /** The pane's number (the N of %N), for pane cells. */
  paneId: number | undefined;

  constructor(parent?: LayoutCell) {
    this.parent = parent;
  }

  setSize(sx: number, sy: number, xoff: number, yoff: number): void {
    this.sx = sx;
    this.sy = sy;
    this.xoff = xoff;
    this.yoff = yoff;
  }
}

/** A fresh layout holding one pane that fills the window. */
export function singlePaneLayout(paneId: number, sx: number, sy: number): LayoutCell {
  const cell = new LayoutCell();
  cell.setSize(sx, sy, 0, 0);
  cell.paneId = paneId;
  return cell;
}

/** Every pane cell, in tree order (tmux's pane order for a fresh layout). */
export function paneCells(root: LayoutCell): LayoutCell[] {
  if (root.type === 'pane') return [root];
  return root.children.flatMap(paneCells);
}

/** The cell of pane N, or undefined. */
export function findPaneCell(root: LayoutCell, paneId: number): LayoutCell | undefined {
  return paneCells(root).find((c) => c.paneId === paneId);
}

export interface SplitOptions {
  /** Size of the new cell in rows or columns; undefined splits in the middle. */
  size?: number;
  /** Put the new cell before (left of / above) the old one. */
  before?: boolean;
  /** Split the whole window rather than the pane (split-window -f). */
  fullSize?: boolean;
}

/**
 * Splits `target` (or, with fullSize, the whole window) for a new pane; returns the new root and
 * the new cell, or undefined when there is no room ("no space for new pane").
 */
export function splitCell(root: LayoutCell, target: LayoutCell, type: 'leftright' | 'topbottom', newPaneId: number, options: SplitOptions = {}): { root: LayoutCell; cell: LayoutCell } | undefined {
  const lc = options.fullSize ? root : target;
  const { sx, sy, xoff, yoff } = lc;
  const saved = type === 'leftright' ? sx : sy;
  if (saved < PANE_MINIMUM * 2 + 1) return undefined;
  let size2: number;
  if (options.size === undefined) size2 = Math.floor((saved + 1) / 2) - 1;
  else if (options.before) size2 = saved - options.size - 1;
  else size2 = options.size;
  if (size2 < PANE_MINIMUM) size2 = PANE_MINIMUM;
  else if (size2 > saved - 2) size2 = saved - 2;
  const size1 = saved - 1 - size2;
  const newSize = options.before ? size2 : size1;

  let newRoot = root;
  let lcnew: LayoutCell;
  let resizeFirst = false;
  if (lc.parent && lc.parent.type === type) {
    const parent = lc.parent;
    lcnew = new LayoutCell(parent);
    const at = parent.children.indexOf(lc);
    parent.children.splice(options.before ? at : at + 1, 0, lcnew);
  } else if (options.fullSize && !lc.parent && lc.type === type) {
    if (type === 'leftright') {
      lc.sx = newSize;
      resizeChildCells(lc);
      lc.sx = saved;
    } else {
      lc.sy = newSize;
      resizeChildCells(lc);
      lc.sy = saved;
    }
    resizeFirst = true;
    lcnew = new LayoutCell(lc);
    const rest = saved - 1 - newSize;
    if (type === 'leftright') lcnew.setSize(rest, sy, 0, 0);
    else lcnew.setSize(sx, rest, 0, 0);
    if (options.before) lc.children.unshift(lcnew);
    else lc.children.push(lcnew);
  } else {
    const parent = new LayoutCell(lc.parent);
    parent.type = type;
    parent.setSize(sx, sy, xoff, yoff);
    if (!lc.parent) newRoot = parent;
    else lc.parent.children.splice(lc.parent.children.indexOf(lc), 1, parent);
    lc.parent = parent;
    parent.children.push(lc);
    lcnew = new LayoutCell(parent);
    if (options.before) parent.children.unshift(lcnew);
    else parent.children.push(lcnew);
  }
  const [lc1, lc2] = options.before ? [lcnew, lc] : [lc, lcnew];
  if (!resizeFirst && type === 'leftright') {
    lc1.setSize(size1, sy, xoff, yoff);
    lc2.setSize(size2, sy, xoff + lc1.sx + 1, yoff);
  } else if (!resizeFirst) {
    lc1.setSize(sx, size1, xoff, yoff);
    lc2.setSize(sx, size2, xoff, yoff + lc1.sy + 1);
  }
  if (options.fullSize) {
    if (!resizeFirst) resizeChildCells(lc);
    fixOffsets(newRoot);
  }
  lcnew.paneId = newPaneId;
  return { root: newRoot, cell: lcnew };
}

/** Removes pane N's cell, giving its space to a neighbour; returns the new root (undefined when it was the last). */
export function closePane(root: LayoutCell, paneId: number): LayoutCell | undefined {
  const lc = findPaneCell(root, paneId);
  if (!lc) return root;
  const parent = lc.parent;
  if (!parent) return undefined;
  const at = parent.children.indexOf(lc);
  const other = at === 0 ? parent.children[1] : parent.children[at - 1];
  if (other) resizeAdjust(other, parent.type, (parent.type === 'leftright' ? lc.sx : lc.sy) + 1);
  parent.children.splice(at, 1);
  let newRoot = root;
  if (parent.children.length === 1) {
    const only = parent.children[0] as LayoutCell;
    only.parent = parent.parent;
    if (!only.parent) {
      only.xoff = 0;
      only.yoff = 0;
      newRoot = only;
    } else {
      only.parent.children.splice(only.parent.children.indexOf(parent), 1, only);
    }
  }
  fixOffsets(newRoot);
  return newRoot;
}

/** Grows or shrinks a cell by `change` along `type`, sharing it out among children as tmux does. */
function resizeAdjust(lc: LayoutCell, type: LayoutType, change: number): void {
  if (type === 'leftright') lc.sx += change;
  else lc.sy += change;
  if (lc.type === 'pane') return;
  if (lc.type !== type) {
    for (const child of lc.children) resizeAdjust(child, type, change);
    return;
  }
  let left = change;
  let stuck = 0;
  while (left !== 0) {
    let moved = false;
    for (const child of lc.children) {
      if (left === 0) break;
      if (left > 0) {
        resizeAdjust(child, type, 1);
        left--;
        moved = true;
        continue;
      }
      if (resizeCheck(child, type) > 0) {
        resizeAdjust(child, type, -1);
        left++;
        moved = true;
      }
    }
    // tmux loops until done; a cell that cannot shrink any further would loop forever, so stop.
    if (!moved && ++stuck > 1) break;
  }
}

/** How much a cell can shrink along `type`. */
function resizeCheck(lc: LayoutCell, type: LayoutType): number {
  if (lc.type === 'pane') {
    const available = type === 'leftright' ? lc.sx : lc.sy;
    return available > PANE_MINIMUM ? available - PANE_MINIMUM : 0;
  }
  if (lc.type === type) return lc.children.reduce((sum, c) => sum + resizeCheck(c, type), 0);
  return Math.min(...lc.children.map((c) => resizeCheck(c, type)));
}

/** Spreads a node's new size over its children, in proportion (layout_resize_child_cells). */
export function resizeChildCells(lc: LayoutCell): void {
  if (lc.type === 'pane') return;
  const count = lc.children.length;
  let previous = count - 1;
  for (const child of lc.children) previous += lc.type === 'leftright' ? child.sx : child.sy;
  let available = lc.type === 'leftright' ? lc.sx : lc.sy;
  lc.children.forEach((child, idx) => {
    if (lc.type === 'topbottom') {
      child.sx = lc.sx;
      child.xoff = lc.xoff;
    } else {
      child.sx = newPaneSize(previous, child, lc.type, lc.sx, count - idx, available);
      available -= child.sx + 1;
    }
    if (lc.type === 'leftright') {
      child.sy = lc.sy;
      child.yoff = lc.yoff;
    } else {
      child.sy = newPaneSize(previous, child, lc.type, lc.sy, count - idx, available);
      available -= child.sy + 1;
    }
    resizeChildCells(child);
  });
}

function newPaneSize(previous: number, lc: LayoutCell, type: LayoutType, size: number, countLeft: number, sizeLeft: number): number {
  if (countLeft === 1) return sizeLeft;
  const available = resizeCheck(lc, type);
  const current = type === 'leftright' ? lc.sx : lc.sy;
  let min = (PANE_MINIMUM + 1) * (countLeft - 1);
  if (current - available > min) min = current - available;
  let next = Math.floor((current * size) / previous);
  const max = sizeLeft - min;
  if (next > max) next = max;
  if (next < PANE_MINIMUM) next = PANE_MINIMUM;
  return next;
}

/** Recomputes every cell's offsets from the root down. */
export function fixOffsets(root: LayoutCell): void {
  root.xoff = 0;
  root.yoff = 0;
  fixOffsetsBelow(root);
}

function fixOffsetsBelow(lc: LayoutCell): void {
  if (lc.type === 'leftright') {
    let x = lc.xoff;
    for (const child of lc.children) {
      child.xoff = x;
      child.yoff = lc.yoff;
      if (child.type !== 'pane') fixOffsetsBelow(child);
      x += child.sx + 1;
    }
  } else if (lc.type === 'topbottom') {
    let y = lc.yoff;
    for (const child of lc.children) {
      child.xoff = lc.xoff;
      child.yoff = y;
      if (child.type !== 'pane') fixOffsetsBelow(child);
      y += child.sy + 1;
    }
  }
}

/** Resizes pane N's cell to `size` along `type` (resize-pane -x/-y). */
export function resizePaneTo(root: LayoutCell, paneId: number, type: 'leftright' | 'topbottom', size: number): void {
  let lc = findPaneCell(root, paneId);
  if (!lc) return;
  let parent = lc.parent;
  while (parent && parent.type !== type) {
    lc = parent;
    parent = lc.parent;
  }
  if (!parent) return;
  const current = type === 'leftright' ? lc.sx : lc.sy;
  const change = lc === parent.children.at(-1) ? current - size : size - current;
  resizePane(root, paneId, type, change, true);
}

/** Grows (change > 0) or shrinks pane N's cell, taking from or giving to its neighbours. */
export function resizePane(root: LayoutCell, paneId: number, type: 'leftright' | 'topbottom', change: number, opposite: boolean): void {
  let lc = findPaneCell(root, paneId);
  if (!lc) return;
  let parent = lc.parent;
  while (parent && parent.type !== type) {
    lc = parent;
    parent = lc.parent;
  }
  if (!parent) return;
  if (lc === parent.children.at(-1)) lc = parent.children[parent.children.length - 2];
  if (!lc) return;
  let needed = change;
  while (needed !== 0) {
    const size = change > 0 ? grow(parent, lc, type, needed, opposite) : shrink(parent, lc, type, needed);
    needed += change > 0 ? -size : size;
    if (size === 0) break;
  }
  fixOffsets(root);
}

function grow(parent: LayoutCell, lc: LayoutCell, type: LayoutType, needed: number, opposite: boolean): number {
  const siblings = parent.children;
  const at = siblings.indexOf(lc);
  let remove: LayoutCell | undefined;
  let size = 0;
  for (let i = at + 1; i < siblings.length; i++) {
    size = resizeCheck(siblings[i] as LayoutCell, type);
    if (size > 0) {
      remove = siblings[i];
      break;
    }
  }
  if (opposite && !remove) {
    for (let i = at - 1; i >= 0; i--) {
      size = resizeCheck(siblings[i] as LayoutCell, type);
      if (size > 0) {
        remove = siblings[i];
        break;
      }
    }
  }
  if (!remove) return 0;
  size = Math.min(size, needed);
  resizeAdjust(lc, type, size);
  resizeAdjust(remove, type, -size);
  return size;
}

function shrink(parent: LayoutCell, lc: LayoutCell, type: LayoutType, needed: number): number {
  const siblings = parent.children;
  let i = siblings.indexOf(lc);
  let size = 0;
  let remove: LayoutCell | undefined;
  for (; i >= 0; i--) {
    size = resizeCheck(siblings[i] as LayoutCell, type);
    if (size !== 0) {
      remove = siblings[i];
      break;
    }
  }
  if (!remove) return 0;
  const add = siblings[siblings.indexOf(lc) + 1];
  if (!add) return 0;
  size = Math.min(size, -needed);
  resizeAdjust(add, type, size);
  resizeAdjust(remove, type, -size);
  return size;
}

/** The layout as tmux prints it in `#{window_layout}`: a checksum, then the cells. */
export function dumpLayout(root: LayoutCell): string {
  const body = appendCell(root);
  return `${layoutChecksum(body).toString(16).padStart(4, '0')},${body}`;
}

function appendCell(lc: LayoutCell): string {
  let out = `${lc.sx}x${lc.sy},${lc.xoff},${lc.yoff}`;
  if (lc.type === 'pane') return lc.paneId !== undefined ? `${out},${lc.paneId}` : out;
  const [open, close] = lc.type === 'leftright' ? ['{', '}'] : ['[', ']'];
  out += open + lc.children.map(appendCell).join(',') + close;
  return out;
}

/** tmux's 16-bit layout checksum (rotate right by one, add the byte). */
export function layoutChecksum(text: string): number {
  let csum = 0;
  for (let i = 0; i < text.length; i++) {
    csum = ((csum >> 1) + ((csum & 1) << 15)) & 0xffff;
    csum = (csum + text.charCodeAt(i)) & 0xffff;
  }
  return csum;
}
