/**
 * What a controller last knew of each node agent pane's state. A node tells each change once, on
 * core NATS, which does not resend: one lost on the way (a reconnect, a slow consumer during a
 * flood) would leave a dashboard showing an agent busy that waits on an approval, since nothing
 * changes until someone answers. So the controller looks at every node's states now and then (with
 * its renewals) and tells its subscribers each one that differs from what it last knew.
 */
import type { NodePaneState } from '../api/index.js';
import type { Result } from '../protocol/methods.js';

type PaneStateInfo = Result<'pane_states'>['states'][number];

interface Known {
  state: PaneStateInfo['state'];
  /** The state and the approval it waits on, as one comparable string. */
  key: string;
  /** The push that told it (0: a look did). */
  push: number;
}

export class NodeStates {
  private readonly known = new Map<string, Known>();
  private pushes = 0;

  constructor(private readonly tell: (state: NodePaneState) => void) {}

  /** A change a node told: passed on, and known. */
  pushed(state: NodePaneState): void {
    this.pushes += 1;
    this.known.set(state.pane_id, { state: state.state, key: keyOf(state.state, state.approval), push: this.pushes });
    this.tell(state);
  }

  /** Taken before a look asks: a change pushed after it is newer than what the look finds. */
  mark(): number {
    return this.pushes;
  }

  /** What `node` answered for its agent panes (ids `<node>/<pane>`), asked after `mark`: each one that differs from what was known is told. */
  looked(node: string, states: readonly PaneStateInfo[], mark: number): void {
    const seen = new Set<string>();
    for (const state of states) {
      seen.add(state.pane_id);
      const known = this.known.get(state.pane_id);
      if (known && known.push > mark) continue;
      const key = keyOf(state.state, state.approval);
      if (known?.key === key) continue;
      this.known.set(state.pane_id, { state: state.state, key, push: 0 });
      this.tell({ pane_id: state.pane_id, state: state.state, previous: known?.state ?? state.state, at: Date.now(), approval: state.approval });
    }
    for (const id of this.known.keys()) if (id.startsWith(`${node}/`) && !seen.has(id)) this.known.delete(id);
  }

  /** Forgets the panes of nodes that are gone. */
  keepNodes(nodes: readonly string[]): void {
    const live = new Set(nodes);
    for (const id of this.known.keys()) if (!live.has(id.slice(0, id.indexOf('/')))) this.known.delete(id);
  }
}

function keyOf(state: string, approval: PaneStateInfo['approval']): string {
  return JSON.stringify([state, approval?.id ?? null, approval?.command ?? null, approval?.path ?? null]);
}
