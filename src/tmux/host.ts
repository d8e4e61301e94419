/**
 * What the tmux model needs from the panes underneath it: start a program in a terminal of a given
 * size, read its screen and history, type into it, resize it, end it. In the daemon these are real
 * Switchboard panes (registry-host.ts); the model itself never touches a PTY.
 */
import type { Disposable } from '../core/disposable.js';
import type { CapturedRow } from '../pane/index.js';

/** How a pane's program is started. */
export interface SpawnSpec {
  /** A program and its arguments, run directly; or a shell command line run by `shell -c`. */
  argv: readonly string[];
  cwd: string;
  /** The whole environment the program gets. */
  env: Record<string, string>;
  cols: number;
  rows: number;
  historyLimit: number;
  /** What Switchboard's listings and dashboard call the pane ("session:window.index title"). */
  label: string;
  /** The command as tmux shows it in #{pane_start_command}. */
  commandText: string;
  /** The scopes of the token the pane's programs get; undefined: the owner's. */
  paneScopes?: readonly string[];
}

/** How a pane's program ended. */
export interface HostExit {
  exitCode: number | null;
  signal: string | null;
}

/** One running (or exited) program in a terminal. */
export interface HostPane {
  /** Switchboard's own id for the pane. */
  readonly id: string;
  readonly pid: number;
  readonly alive: boolean;
  readonly exit: HostExit | undefined;
  readonly cols: number;
  readonly rows: number;
  readonly historyLength: number;
  readonly cursor: { x: number; y: number; visible: boolean };
  readonly altScreen: boolean;
  /** The program asked for bracketed paste (DECSET 2004). */
  readonly bracketedPaste: boolean;
  /** The program asked for application cursor keys (DECCKM). */
  readonly applicationCursorKeys: boolean;
  /** The title the program set with OSC 0/2, or ''. */
  readonly windowTitle: string;
  readonly ttyName: string;
  /** Rows [from, to) of history then screen (0 = oldest history row). */
  captureRows(from: number, to: number, styled: boolean): CapturedRow[];
  /** Writes input bytes; throws once the program has exited. */
  write(data: string): void;
  resize(cols: number, rows: number): void;
  clearHistory(): void;
  /** The foreground program's name and directory, as tmux's pane_current_command and pane_current_path. */
  foreground(): { name: string; cwd: string; pid: number };
  /** Sets the label Switchboard's listings show. */
  setLabel(label: string): void;
  onExit(listener: (exit: HostExit) => void): Disposable;
  onOutput(listener: (data: Buffer) => void): Disposable;
  /** Ends the program (HUP, then harder); resolves once it is gone. */
  kill(): Promise<void>;
  /** Ends the program if needed and removes the pane from Switchboard. */
  remove(): Promise<void>;
}

/** A shell command whose standard input is fed (pipe-pane). */
export interface PipeProcess {
  write(data: Buffer): void;
  /** Ends its input and, if it does not finish, the process. */
  close(): void;
  onExit(listener: () => void): Disposable;
}

/** Where panes come from. */
export interface PaneHost {
  /** Starts a pane; rejects with a message tmux would print when the program cannot be started. */
  spawn(spec: SpawnSpec): Promise<HostPane>;
  /** The argv that runs `command` through `shell` (`shell -c command` on POSIX). */
  shellCommand(shell: string, command: string): string[];
  /** The argv of `shell` as a login shell (tmux starts the default shell that way). */
  loginShell(shell: string): string[];
  /** The shell used when $SHELL is unusable (/bin/sh on POSIX). */
  fallbackShell(): string;
  /** Runs `command` through `shell -c` with its input fed from the pane (pipe-pane). */
  startPipe(shell: string, command: string, cwd: string, env: Record<string, string>): PipeProcess;
  /** Runs `shell -c command` to its end (run-shell, if-shell): its output and exit status. */
  runShell(shell: string, command: string, cwd: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string; exitCode: number }>;
  /** True when a path names an executable file (default-shell checks). */
  isExecutable(file: string): boolean;
}
