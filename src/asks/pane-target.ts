/**
 * An AskTarget over an agent in a Pane: its state tracker says what it is doing, its dialog
 * responder whether a dialog is open, the agents layer's sendPrompt types the question (and
 * confirms the CLI took it), its profile says where the transcript is, and the runs layer's
 * final-message reader reads the reply off the screen when there is no transcript. The daemon's
 * AgentPane (phase 2) will stand in for this.
 */
import { homedir } from 'node:os';
import type { Disposable } from '../core/disposable.js';
import { dialogResponderOf, sendPrompt, type AgentProfile, type AgentState, type AgentStateTracker } from '../agents/index.js';
import type { Pane } from '../pane/index.js';
import { extractFinalMessage } from '../agents/index.js';
import { isReadableFormat, type TranscriptLocation } from './transcripts/locate.js';
import type { AskTarget } from './types.js';

export interface PaneTargetOptions {
  pane: Pane;
  /** The agent's profile (undefined for a plain program: no transcript, the screen only). */
  profile?: AgentProfile;
  version?: string;
  tracker: AgentStateTracker;
  /** The HOME the CLI runs with (its isolated HOME, else the user's). */
  home?: string;
  /** Variables the CLI was started with on top of the daemon's (CODEX_HOME…). */
  env?: Record<string, string>;
}

export class PaneAskTarget implements AskTarget {
  constructor(private readonly options: PaneTargetOptions) {}

  get id(): string {
    return this.options.pane.id;
  }
  get title(): string {
    return this.options.pane.title;
  }
  get agent(): string | undefined {
    return this.options.profile?.data.name ?? this.options.pane.agent?.name;
  }
  get cwd(): string {
    return this.options.pane.cwd;
  }
  get alive(): boolean {
    return this.options.pane.alive;
  }
  get state(): AgentState {
    return this.options.tracker.state.state;
  }
  get stateSince(): number {
    return this.options.tracker.state.at;
  }
  get dialogOpen(): boolean {
    const responder = dialogResponderOf(this.options.pane);
    const kind = this.options.tracker.lastDetection.kind;
    return (responder !== undefined && !responder.clear) || kind === 'dialog' || kind === 'approval';
  }

  onStateChange(listener: () => void): Disposable {
    return this.options.tracker.onChange(() => listener());
  }

  onExit(listener: () => void): Disposable {
    return this.options.pane.onExit(() => listener());
  }

  async prompt(text: string, signal: AbortSignal): Promise<void> {
    const { pane, profile, version, tracker } = this.options;
    tracker.beginTurn();
    const input = profile?.data.input ?? { separate_enter: true, echo_timeout_ms: 500, enter_delay_ms: 50, paste_multiline: true };
    await sendPrompt(pane, { input, ...(profile ? { screens: profile.screensFor(version) } : {}) }, text, signal);
  }

  transcript(): TranscriptLocation | undefined {
    const spec = this.options.profile?.data.transcript;
    if (!spec || !isReadableFormat(spec.format)) return undefined;
    return {
      format: spec.format,
      home: this.options.home ?? homedir(),
      cwd: this.options.pane.cwd,
      dir: spec.dir,
      pattern: spec.pattern,
      ...(this.options.env ? { env: this.options.env } : {}),
      binary: this.options.pane.file,
    };
  }

  screenReply(question: string): string | null {
    const { pane, profile, version } = this.options;
    if (!profile) return null;
    return extractFinalMessage(profile, pane.screenLines({ joinWrapped: true }), question, version, pane.cols);
  }
}
