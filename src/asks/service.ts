/**
 * Asks in the daemon: the ask engine over the daemon's own panes. Every agent pane (one with an
 * AgentPane: a profile the catalog knows) is a target, through a PaneAskTarget made once per pane
 * with its AgentPane and the HOME and variables it was started with (an isolated HOME moves its
 * transcripts). Plain programs are not targets: nothing can tell when they answered.
 */
import type { Disposable } from '../core/disposable.js';
import type { Logger } from '../core/logger.js';
import type { AgentPanes } from '../agents/index.js';
import type { PaneRegistry } from '../pane/index.js';
import { AskEngine } from './engine.js';
import { PaneAskTarget } from './pane-target.js';
import type { AskDirectory, AskRecord, AskRecorder, AskRequest, AskTarget } from './types.js';

/** One pane as an ask target is listed (list_agents, ask_targets). */
export interface AskTargetInfo {
  paneId: string;
  agent: string | null;
  state: string;
  cwd: string;
  title: string;
  alive: boolean;
  askable: boolean;
}

/** The daemon's agent panes as ask targets, each made once and forgotten with its pane. */
export class RegistryAskDirectory implements AskDirectory, Disposable {
  private readonly targets = new Map<string, PaneAskTarget>();
  private readonly subscription: Disposable;

  constructor(
    private readonly panes: PaneRegistry,
    private readonly agentPanes: AgentPanes,
  ) {
    this.subscription = panes.onPaneRemoved((pane) => this.targets.delete(pane.id));
  }

  list(): readonly AskTarget[] {
    return this.panes.list().flatMap((pane) => {
      const target = this.get(pane.id);
      return target ? [target] : [];
    });
  }

  get(paneId: string): AskTarget | undefined {
    const known = this.targets.get(paneId);
    if (known) return known;
    const agent = this.agentPanes.get(paneId);
    if (!agent) return undefined;
    const { pane } = agent;
    const home = pane.env.HOME ?? pane.env.USERPROFILE;
    const target = new PaneAskTarget({ agent, ...(home ? { home } : {}), env: { ...pane.env } });
    this.targets.set(paneId, target);
    return target;
  }

  dispose(): void {
    this.subscription.dispose();
    this.targets.clear();
  }
}

/** What the operations use: the engine over the daemon's panes. */
export class AskService implements Disposable {
  readonly directory: RegistryAskDirectory;
  readonly engine: AskEngine;

  /** Asks are kept by `recorder` (default: in memory; the daemon moves them to its run ledger with `engine.keepAsksIn`). */
  constructor(parts: { panes: PaneRegistry; agentPanes: AgentPanes; logger?: Logger; recorder?: AskRecorder }) {
    this.directory = new RegistryAskDirectory(parts.panes, parts.agentPanes);
    this.engine = new AskEngine({ directory: this.directory, ...(parts.logger ? { logger: parts.logger } : {}), ...(parts.recorder ? { recorder: parts.recorder } : {}) });
  }

  ask(request: AskRequest): AskRecord {
    return this.engine.ask(request);
  }

  /** Every agent pane, as ask targets are listed. */
  targets(): AskTargetInfo[] {
    return this.directory.list().map((t) => ({ paneId: t.id, agent: t.agent ?? null, state: t.alive ? t.state : 'exited', cwd: t.cwd, title: t.title, alive: t.alive, askable: this.engine.isAskable(t.id) }));
  }

  /** Fails the asks in flight (SHUTTING_DOWN, recorded) and lets go of the panes. Safe to call again. */
  dispose(): void {
    this.engine.dispose();
    this.directory.dispose();
  }
}
