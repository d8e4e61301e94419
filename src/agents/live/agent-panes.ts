/**
 * The agent panes of a registry: an AgentPane for each pane started as an agent whose profile the
 * catalog knows, made when the pane is created and disposed when it is removed. The daemon keeps
 * one, so its pane logs, the dashboard, answer_approval and a task run in a daemon pane all see the
 * same tracker and the same pending approval.
 */
import { DisposableStore, type Disposable } from '../../core/disposable.js';
import type { Pane, PaneRegistry } from '../../pane/index.js';
import { AgentPane } from './agent-pane.js';
import type { AgentCatalog } from '../profiles/catalog.js';

export class AgentPanes implements Disposable {
  private readonly panes = new Map<string, AgentPane>();
  private readonly store = new DisposableStore();

  constructor(
    registry: PaneRegistry,
    private readonly catalog: AgentCatalog,
  ) {
    for (const pane of registry.list()) this.attach(pane);
    this.store.add(registry.onPaneCreated((pane) => this.attach(pane)));
    this.store.add(registry.onPaneRemoved((pane) => this.detach(pane.id)));
  }

  /** The agent in pane `paneId`, if it runs one the catalog knows. */
  get(paneId: string): AgentPane | undefined {
    return this.panes.get(paneId);
  }

  dispose(): void {
    this.store.dispose();
    for (const agent of this.panes.values()) agent.dispose();
    this.panes.clear();
  }

  private attach(pane: Pane): void {
    if (this.panes.has(pane.id) || !pane.agent) return;
    const profile = this.catalog.find(pane.agent.name);
    if (profile) this.panes.set(pane.id, new AgentPane(pane, profile));
  }

  private detach(paneId: string): void {
    this.panes.get(paneId)?.dispose();
    this.panes.delete(paneId);
  }
}
