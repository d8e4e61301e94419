/**
 * What the dashboard knows about every pane: the daemon's listing plus the agent state pushed by
 * `state` notifications. A plain store (subscribe + snapshot) so React reads it with
 * useSyncExternalStore and the update rules stay testable without a DOM.
 */
import type { AgentState, Approval, Notifications, PaneInfo, PaneStateEntry } from '../rpc/wire.js';

export interface PaneView {
  info: PaneInfo;
  /** The agent's state; null for a pane the server reports no state for (a plain shell). */
  state: AgentState | null;
  /** The pending approval while `state` is waiting_approval. */
  approval: Approval | null;
  question: string | undefined;
  error: string | undefined;
}

type Listener = () => void;

export class PaneStore {
  private panes = new Map<string, PaneView>();
  /** States pushed for panes not listed yet (a new pane's first state can beat the listing). */
  private early = new Map<string, Notifications['state']>();
  private snapshot: readonly PaneView[] = [];
  private readonly listeners = new Set<Listener>();

  readonly subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Every pane, oldest first; the same array until something changes. */
  readonly getSnapshot = (): readonly PaneView[] => this.snapshot;

  get(paneId: string): PaneView | undefined {
    return this.panes.get(paneId);
  }

  /** The daemon's full listing: panes it no longer has are dropped, states already known kept. */
  setPanes(infos: readonly PaneInfo[]): void {
    const next = new Map<string, PaneView>();
    for (const info of infos) {
      const known = this.panes.get(info.pane_id);
      next.set(info.pane_id, known ? { ...known, info } : { info, state: info.alive ? null : 'exited', approval: null, question: undefined, error: undefined });
    }
    this.panes = next;
    for (const change of this.early.values()) this.update(change.pane_id, (view) => withState(view, change));
    this.early = new Map();
    this.changed();
  }

  /**
   * The first paint's states (`pane_states`). Panes in `newer` got a `state` notification while
   * the request was in flight; theirs is fresher than the answer, so it is kept.
   */
  setStates(entries: readonly PaneStateEntry[], newer: ReadonlySet<string>): void {
    for (const entry of entries) {
      if (newer.has(entry.pane_id)) continue;
      this.update(entry.pane_id, (view) => ({ ...view, state: entry.state, approval: entry.approval }));
    }
    this.changed();
  }

  applyState(change: Notifications['state']): void {
    if (!this.panes.has(change.pane_id)) {
      this.early.set(change.pane_id, change);
      return;
    }
    this.update(change.pane_id, (view) => withState(view, change));
    this.changed();
  }

  applyExit(paneId: string, exitCode: number | null, signal: string | null): void {
    this.update(paneId, (view) => ({
      ...view,
      info: { ...view.info, alive: false, exit_code: exitCode, signal },
      state: view.state === null ? null : 'exited',
      approval: null,
    }));
    this.changed();
  }

  remove(paneId: string): void {
    if (this.panes.delete(paneId)) this.changed();
  }

  private update(paneId: string, change: (view: PaneView) => PaneView): void {
    const view = this.panes.get(paneId);
    if (view) this.panes.set(paneId, change(view));
  }

  private changed(): void {
    this.snapshot = [...this.panes.values()];
    for (const listener of [...this.listeners]) listener();
  }
}

function withState(view: PaneView, change: Notifications['state']): PaneView {
  return {
    ...view,
    state: change.state,
    approval: change.state === 'waiting_approval' ? change.approval : null,
    question: change.question,
    error: change.error,
  };
}
