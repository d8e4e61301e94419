/**
 * The order the grid shows panes in: the user's arrangement (ids moved left and right), with
 * panes it does not mention yet appended in creation order.
 */
import type { PaneView } from './pane-store.js';

export function orderPanes(views: readonly PaneView[], order: readonly string[]): PaneView[] {
  const byId = new Map(views.map((v) => [v.info.pane_id, v]));
  const placed = order.flatMap((id) => {
    const view = byId.get(id);
    return view ? [view] : [];
  });
  const placedIds = new Set(order);
  return [...placed, ...views.filter((v) => !placedIds.has(v.info.pane_id))];
}

/** The arrangement after moving `paneId` one place left (-1) or right (+1) in `shown`. */
export function movePane(shown: readonly PaneView[], paneId: string, delta: -1 | 1): string[] {
  const ids = shown.map((v) => v.info.pane_id);
  const from = ids.indexOf(paneId);
  const to = from + delta;
  if (from === -1 || to < 0 || to >= ids.length) return ids;
  [ids[from], ids[to]] = [ids[to] ?? paneId, paneId];
  return ids;
}
