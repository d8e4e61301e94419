import type { PaneView } from './pane-store.js';

/**
 * The pane's state by name: the agent's state from the server; before its first state arrives,
 * an agent pane is `starting`; a pane the server tracks no state for (a plain shell) is
 * `running` or `exited`.
 */
function stateName(view: PaneView): string {
  if (view.state) return view.state;
  if (!view.info.alive) return 'exited';
  return view.info.agent ? 'starting' : 'running';
}

export function StateBadge({ view }: { view: PaneView }) {
  const name = stateName(view);
  return (
    <span className={`badge badge-${name}`} data-testid="state-badge" data-state={name} title={view.error ?? view.question ?? name}>
      {name}
    </span>
  );
}
