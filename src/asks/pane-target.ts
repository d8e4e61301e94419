/**
 * An AskTarget over the agent in a daemon pane, its AgentPane: its tracker says what it is doing,
 * its dialog responder whether a dialog is open, and a question goes in as every prompt to an agent
 * pane does (`AgentPane.prompt`: logged in the pane's log, a dialog in the way answered by the
 * pane's launch policy, the profile's way of typing, confirmed taken). Its profile says where the
 * transcript is, and the screen's final message is the reply when there is no transcript.
 */
import { homedir } from 'node:os';
import type { Disposable } from '../core/disposable.js';
import { extractFinalMessage, type AgentPane, type AgentState } from '../agents/index.js';
import { isReadableFormat, type TranscriptLocation } from './transcripts/locate.js';
import type { AskTarget } from './types.js';

export interface PaneTargetOptions {
  agent: AgentPane;
  /** The HOME the CLI runs with (its isolated HOME, else the user's). */
  home?: string;
  /** Variables the CLI was started with on top of the daemon's (CODEX_HOME…). */
  env?: Record<string, string>;
}

export class PaneAskTarget implements AskTarget {
  constructor(private readonly options: PaneTargetOptions) {}

  get id(): string {
    return this.options.agent.pane.id;
  }
  get title(): string {
    return this.options.agent.pane.title;
  }
  get agent(): string | undefined {
    return this.options.agent.profile.data.name;
  }
  get cwd(): string {
    return this.options.agent.pane.cwd;
  }
  get alive(): boolean {
    return this.options.agent.pane.alive;
  }
  get state(): AgentState {
    return this.options.agent.state.state;
  }
  get stateSince(): number {
    return this.options.agent.state.at;
  }
  get dialogOpen(): boolean {
    const responder = this.options.agent.responder;
    const kind = this.options.agent.tracker.lastDetection.kind;
    return (responder !== undefined && !responder.clear) || kind === 'dialog' || kind === 'approval';
  }

  onStateChange(listener: () => void): Disposable {
    return this.options.agent.onState(() => listener());
  }

  onExit(listener: () => void): Disposable {
    return this.options.agent.pane.onExit(() => listener());
  }

  async prompt(text: string, signal: AbortSignal): Promise<void> {
    await this.options.agent.prompt(text, signal);
  }

  transcript(): TranscriptLocation | undefined {
    const spec = this.options.agent.profile.data.transcript;
    if (!spec || !isReadableFormat(spec.format)) return undefined;
    return {
      format: spec.format,
      home: this.options.home ?? homedir(),
      cwd: this.options.agent.pane.cwd,
      dir: spec.dir,
      pattern: spec.pattern,
      ...(this.options.env ? { env: this.options.env } : {}),
      binary: this.options.agent.pane.file,
    };
  }

  screenReply(question: string): string | null {
    const { pane, profile } = this.options.agent;
    return extractFinalMessage(profile, pane.screenLines({ joinWrapped: true }), question, pane.agent?.version ?? undefined, pane.cols);
  }
}
