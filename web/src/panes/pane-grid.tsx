/**
 * The panes as a grid of 1 to 4 columns, in the user's order; one pane can fill the grid
 * (maximized) while the others stay mounted, hidden, so their terminals keep their connections.
 */
import { isStringArray, isStringOrNull, useStoredState } from '../ui/stored-state.js';
import { PaneCard } from './pane-card.js';
import { movePane, orderPanes } from './pane-order.js';
import type { PaneView } from './pane-store.js';

export interface GridProps {
  views: readonly PaneView[];
  columns: number;
  selected: ReadonlySet<string>;
  onToggleSelected: (paneId: string) => void;
}

export function PaneGrid({ views, columns, selected, onToggleSelected }: GridProps) {
  // Kept across reloads (pane ids stay valid while the daemon runs; unknown ones are ignored).
  const [order, setOrder] = useStoredState<string[]>('switchboard.order', [], isStringArray);
  const [maximized, setMaximized] = useStoredState<string | null>('switchboard.maximized', null, isStringOrNull);
  const shown = orderPanes(views, order);
  const maximizedShown = maximized !== null && shown.some((v) => v.info.pane_id === maximized) ? maximized : null;

  if (shown.length === 0) {
    return (
      <main className="grid-empty" data-testid="pane-grid" data-columns={columns}>
        No panes yet. Start one with the form on the left.
      </main>
    );
  }
  return (
    <main
      className={`grid ${maximizedShown ? 'grid-maximized' : ''}`}
      data-testid="pane-grid"
      data-columns={columns}
      style={{ gridTemplateColumns: maximizedShown ? '1fr' : `repeat(${Math.min(columns, shown.length)}, minmax(0, 1fr))` }}
    >
      {shown.map((view, index) => {
        const id = view.info.pane_id;
        return (
          <PaneCard
            key={id}
            view={view}
            layout={{
              maximized: maximizedShown === id,
              canMoveLeft: index > 0,
              canMoveRight: index < shown.length - 1,
              selected: selected.has(id),
              onToggleMaximize: () => setMaximized(maximized === id ? null : id),
              onMove: (delta) => setOrder(movePane(shown, id, delta)),
              onToggleSelected: () => onToggleSelected(id),
            }}
          />
        );
      })}
    </main>
  );
}
